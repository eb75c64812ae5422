"""``check --ray``: a real local Ray instance on the CPU, two pretend GPUs.

Skipped where Ray is not installed (it is the optional extra
``gemmreg[ray]``, not in the dev extras: see docs/multi-gpu.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_gemmreg
from gemmreg.contract.options import UsageError
from gemmreg.fanout import ray_cluster
from gemmreg.workers import devices

H200, A100 = "NVIDIA H200", "NVIDIA A100-SXM4-80GB"
WAIT_FOR_BATCHES_S = 400.0
"""How long the quick batches may take to come back on a loaded machine
(a bound on a wait, not a timing: they take seconds)."""


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


def test_an_empty_ray_address_is_refused_not_read_as_no_ray(monkeypatch):
    monkeypatch.setenv(ray_cluster.RAY_ADDRESS_ENV, "local")
    for empty in ("", "  "):
        with pytest.raises(UsageError, match="--ray: is empty: name a Ray address"):
            ray_cluster.address(empty)
    assert ray_cluster.address(None) == "local"
    assert ray_cluster.address("10.0.0.1:6379") == "10.0.0.1:6379"
    done = run_gemmreg("compare", "torch_ref", "minimal_triton", "--ray", "")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--ray: is empty" in done.stderr


def test_an_address_with_no_cluster_behind_it_is_one_line_before_any_work(tmp_path, monkeypatch):
    """Ray's own ValueError (no such address) or ConnectionError (nobody
    answered) used to end gemmreg as an internal error, exit 3."""
    monkeypatch.setenv(ray_cluster.RAY_ADDRESS_ENV, "not-an-address")
    done = run_gemmreg("bench", "torch_ref", "--shape", "8", "--out", str(tmp_path / "run"))
    assert done.returncode == 2, done.stderr
    assert (
        "gemmreg: error: no Ray cluster to join at not-an-address: Invalid address" in done.stderr
    )
    assert "internal error" not in done.stderr and not any((tmp_path / "run").glob("*"))

    def refuse(**_: object) -> None:
        raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379")

    import ray

    monkeypatch.setattr(ray, "init", refuse)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    with pytest.raises(UsageError, match=r"no Ray cluster to join at 10\.0\.0\.1:6379: Failed"):
        ray_cluster.connect("10.0.0.1:6379")


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


def _ran(check_json: Path) -> dict[str, set[str]]:
    """kernel -> the statuses of its cases that ran, in a saved check.json."""
    seen: dict[str, set[str]] = {}
    for case in json.loads(check_json.read_text())["cases"]:
        if case["status"] != "skip":
            seen.setdefault(case["kernel"], set()).add(case["status"])
    return seen


@pytest.mark.slow
def test_a_check_on_ray_is_saved_as_each_batch_arrives(tmp_path, fake_plugins):
    """The driver SIGKILLed mid-run (no handler, no final write): check.json
    holds every batch that came back, whole and marked partial; only the
    batch still in flight (a kernel that sleeps) is lost."""
    pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
    fake_plugins("pinned", "sleeps")
    marker, out = tmp_path / "sleeping", tmp_path / "check"
    env = {
        **os.environ,
        devices.FAKE_DEVICES_ENV: f"{H200},{H200}",  # the sleeper holds one, the rest the other
        "GEMMREG_PLUGINS": "none",
        "GEMMREG_TEST_SLEEP_MARKER": str(marker),
    }
    names = ["fake_sleeps", "fake_pinned_a", "fake_pinned_b"]
    picked = ["--dtype", "fp32", "--layout", "rowmajor", "--timeout", "900"]
    command = [sys.executable, "-m", "gemmreg", "check", *names, *picked, "--ray", "local"]
    with open(tmp_path / "stderr.txt", "w") as stderr:
        driver = subprocess.Popen(
            [*command, "--out", str(out)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,  # its Ray instance and workers in its process group
        )
    try:
        deadline = time.monotonic() + WAIT_FOR_BATCHES_S
        while time.monotonic() < deadline and driver.poll() is None:
            saved = out / "check.json"
            if (
                marker.exists()
                and saved.exists()
                and {"fake_pinned_a", "fake_pinned_b"} <= set(_ran(saved))
            ):
                break
            time.sleep(0.5)
        assert driver.poll() is None, (tmp_path / "stderr.txt").read_text()[-3000:]
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the group this test started, and only it
        driver.wait()
    data = json.loads((out / "check.json").read_text())
    assert data["partial"] is True
    ran = _ran(out / "check.json")
    assert set(ran) == {"fake_pinned_a", "fake_pinned_b"}  # the sleeper's batch: lost
    assert all("pass" in statuses for statuses in ran.values())
    assert marker.read_text().startswith("sleeping ")  # it was in flight when killed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["ray_nodes"] and manifest["ray_nodes"][0]["device_name"] == H200
    assert "PARTIAL" in (out / "check.txt").read_text()


@pytest.mark.slow
def test_a_compare_on_ray_times_each_process_as_a_ray_task(tmp_path, fake_plugins):
    pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
    fake_plugins("pinned")
    out = tmp_path / "run"
    env = {devices.FAKE_DEVICES_ENV: f"{H200},{H200}", "GEMMREG_PLUGINS": "none"}
    args = ["--shape", "7x5x3", "--repeats", "3", "--warmup", "1", "--processes", "3"]
    pair = ["fake_pinned_a", "fake_pinned_b"]
    done = run_gemmreg(
        "compare", *pair, *args, "--ray", "local", "--format", "json", "--out", str(out), env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads(done.stdout)
    report, manifest = document["report"], document["manifest"]
    assert report["device_name"] == H200 and report["partial"] is False
    # Cold starts first, then every process, each from a node that names itself.
    assert [(c["kernel"], c["status"]) for c in report["cold"]] == [(n, "ok") for n in pair]
    assert [r["process"] for r in report["records"]] == [0, 1, 2]
    assert all(r["status"] == "ok" and r["host"] for r in report["records"])
    assert sorted((r["kernel"], r["process"]) for r in report["runs"]) == sorted(
        (n, p) for n in pair for p in range(3)
    )
    assert {s["status"] for s in report["summaries"]} == {"timed"}
    assert [(v["baseline"], v["kernel"]) for v in report["verdicts"]] == [tuple(pair)]
    assert manifest["ray_nodes"] and manifest["ray_nodes"][0]["device_name"] == H200
    saved = json.loads((out / "run.json").read_text())
    assert saved["reports"][0]["records"] == report["records"]


@pytest.mark.slow
def test_a_compare_on_ray_over_two_gpu_models_is_refused_in_one_line(fake_plugins):
    pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
    fake_plugins("pinned")
    env = {devices.FAKE_DEVICES_ENV: f"{H200},{A100}", "GEMMREG_PLUGINS": "none"}
    pair = ["fake_pinned_a", "fake_pinned_b"]
    done = run_gemmreg("compare", *pair, "--shape", "7x5x3", "--ray", "local", env=env)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stdout == ""
    assert done.stderr.strip().splitlines()[-1] == (
        "gemmreg: error: compare --ray: GPUs of one model only (its verdict pairs their "
        f"figures), the cluster has {A100} and {H200}"
    )


def test_processes_back_from_two_gpu_models_keep_their_figures_but_give_no_verdict():
    from gemmreg.contract.records import Problem
    from gemmreg.fanout import ray_compare
    from gemmreg.timing.timing_records import CompareReport, Verdict

    verdict = Verdict(
        baseline="a", kernel="b", verdict="faster", speedup=1.5, interval=(1.4, 1.6), explanation=""
    )
    report = CompareReport(
        problem=Problem(m=8, n=8, k=8),
        processes=2,
        seed=1,
        clock="test",
        device_name=f"{A100} and {H200}",
        summaries=(),
        verdicts=(verdict,),
        runs=(),
    )
    lines: list[str] = []
    assert ray_compare.unpaired(report, [H200, H200], lines.append) is report
    judged = ray_compare.unpaired(report, [H200, A100], lines.append)
    assert [(v.verdict, v.speedup) for v in judged.verdicts] == [("no verdict", 1.5)]
    assert f"several models ({A100} and {H200})" in judged.verdicts[0].explanation
    assert lines == [f"warning: {judged.verdicts[0].explanation}"]


class _FakeRay:
    """Stands in for the ``ray`` module: counts connections and shutdowns."""

    def __init__(self) -> None:
        self.inits = self.shutdowns = 0
        self.up = False

    def connect(self, where: str) -> _FakeRay:
        if not self.up:
            self.inits, self.up = self.inits + 1, True
        return self

    def shutdown(self) -> None:
        self.shutdowns, self.up = self.shutdowns + 1, False


def test_a_held_connection_is_reused_by_every_block_inside_and_shut_down_once(monkeypatch):
    fake = _FakeRay()
    monkeypatch.setattr(ray_cluster, "connect", fake.connect)
    for _ in range(2):  # unheld: each block connects and shuts down
        with ray_cluster.connected("local") as ray:
            assert ray is fake
    assert (fake.inits, fake.shutdowns) == (2, 2)
    with ray_cluster.held("local"):
        for _ in range(3):
            with ray_cluster.connected("local"):
                pass
        assert (fake.inits, fake.shutdowns) == (3, 2)  # one more connection, still up
    assert (fake.inits, fake.shutdowns) == (3, 3)


def test_a_compare_on_ray_of_several_dtypes_connects_once(monkeypatch):
    """Each dtype's comparison runs inside one held connection (the timing
    itself stubbed by the local executor's: what is asked is the point)."""
    from gemmreg.commands import compare_command
    from gemmreg.commands.launching import Launch
    from gemmreg.commands.requests import CompareRequest, TimingAsked
    from gemmreg.fanout import executors

    fake = _FakeRay()
    monkeypatch.setattr(ray_cluster, "connect", fake.connect)
    seen: list[tuple[str, int]] = []

    class OnFakeRay(executors.Ray):
        def compare(self, job):
            with ray_cluster.connected(self.address):
                seen.append((job.problem.dtype, fake.inits))
                return executors.Local().compare(job)

    request = CompareRequest(
        kernels=("torch_ref", "triton_baseline"),
        shape=(8, 8, 8),
        dtypes=("fp32", "fp16"),
        layout="rowmajor",
        timing=TimingAsked(processes=2, repeats=3, warmup=1),
    )
    result = compare_command.compare(request, launch=Launch(executor=OnFakeRay("local")))
    assert [r.problem.dtype for r in result.reports] == ["fp32", "fp16"]
    assert seen == [("fp32", 1), ("fp16", 1)] and (fake.inits, fake.shutdowns) == (1, 1)
