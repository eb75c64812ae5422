"""``check --ray``: a real local Ray instance on the CPU, two pretend GPUs.

Skipped where Ray is not installed (it is the optional extra
``gemmreg[ray]``, not in the dev extras: see docs/multi-gpu.md)."""

from __future__ import annotations

import json

import pytest
from conftest import run_gemmreg
from gemmreg.running import devices, ray_cluster

H200 = "NVIDIA H200"


@pytest.mark.slow
def test_a_check_on_ray_survives_a_killed_ray_worker(tmp_path, fake_plugins):
    pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
    fake_plugins("kills_ray_worker")
    marker, out = tmp_path / "killed", tmp_path / "check"
    env = {
        devices.FAKE_DEVICES_ENV: f"{H200},{H200}",
        "GEMMREG_TEST_KILL_MARKER": str(marker),
    }
    names = ["torch_ref", "triton_baseline", "fake_kills_ray_worker"]
    picked = ["--dtype", "fp32", "--layout", "rowmajor", "--format", "json"]
    done = run_gemmreg(
        "check", *names, *picked, "--ray", "local", "--out", str(out), env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert marker.read_text().startswith("killed ")  # a Ray worker did die mid-batch
    cases = json.loads(done.stdout)["cases"]
    ran = [c for c in cases if c["status"] != "skip" and c["kind"] == "values"]
    # Every kernel's cases came back, the killed batch's too (retried), all passing.
    assert {c["kernel"] for c in ran} == set(names)
    assert {c["status"] for c in ran} == {"pass"}
    assert {c["device_name"] for c in ran} == {H200}
    nodes = json.loads((out / "manifest.json").read_text())["ray_nodes"]
    assert nodes and all(n["gemmreg"] and n["python"] for n in nodes)


def test_ray_missing_or_with_devices_is_one_clear_line(monkeypatch):
    done = run_gemmreg("check", "torch_ref", "--ray", "local", "--devices", "0")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "gemmreg: error: --ray and --devices: one or the other (Ray gives each task its GPU)"
    )
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(Exception, match="pip install 'gemmreg\\[ray\\]'"):
        ray_cluster.require()


@pytest.mark.slow
def test_a_sweep_on_ray_saves_every_point_with_its_node(tmp_path, fake_plugins):
    pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
    fake_plugins("pinned")
    out = tmp_path / "run"
    env = {devices.FAKE_DEVICES_ENV: f"{H200},{H200}", "GEMMREG_PLUGINS": "none"}
    args = ["--shape", "6,10", "--repeats", "3", "--warmup", "1", "--processes", "2"]
    pair = ["fake_pinned_a", "fake_pinned_b"]
    done = run_gemmreg("bench", *pair, *args, "--ray", "local", "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads((out / "run.json").read_text())
    assert data["partial"] is False
    assert [r["problem"]["m"] for r in data["reports"]] == [6, 10]
    assert {r["device_name"] for r in data["reports"]} == {H200}
    for report in data["reports"]:
        assert {s["status"] for s in report["summaries"]} == {"timed"}
        assert {v["kernel"] for v in report["verdicts"]} == {"fake_pinned_b"}
    assert data["manifest"]["lost_points"] == []
    assert data["manifest"]["ray_nodes"][0]["device_name"] == H200
