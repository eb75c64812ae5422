"""``compare --devices`` and ``bench --devices`` start their workers ahead of
the plugins, pinned (gemmreg.fanout.ahead_pinned), on pretend GPUs: each
worker pinned to the GPU its work names, none started late, and none left
behind by a command refused once torch resolved the GPUs."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_gemmreg
from gemmreg.fanout import ahead_pinned
from gemmreg.timing import worker_pool
from gemmreg.workers import devices
from test_devices import A100, H200, PIN_LOG_ENV, _pin_log
from test_start_ahead import _alive

AHEAD = {worker_pool.START_AHEAD_ENV: "1", "GEMMREG_TRACE": "1", "GEMMREG_PLUGINS": "none"}


def test_the_gpus_are_guessed_without_torch_or_not_at_all(monkeypatch, tmp_path):
    assert ahead_pinned.guess_indices("1,0", {}) == [1, 0]
    assert ahead_pinned.guess_indices("0,,1", {}) is None  # refused later, in its place
    fake = {devices.FAKE_DEVICES_ENV: f"{H200},{A100},{H200}"}
    assert ahead_pinned.guess_indices("all", fake) == [0, 1, 2]
    assert ahead_pinned.guess_indices("all", {"CUDA_VISIBLE_DEVICES": "4,6"}) == [0, 1]
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"):
        (tmp_path / name).touch()
    monkeypatch.setattr(ahead_pinned, "NVIDIA_NODES", str(tmp_path / "nvidia[0-9]*"))
    assert ahead_pinned.guess_indices("all", {}) == [0, 1]
    monkeypatch.setattr(ahead_pinned, "NVIDIA_NODES", str(tmp_path / "none[0-9]*"))
    assert ahead_pinned.guess_indices("all", {}) is None  # ROCm, say: nothing ahead
    chosen = [devices.Device(0, H200), devices.Device(1, H200)]
    assert ahead_pinned.fits([0, 1], chosen) and not ahead_pinned.fits([0], chosen)
    pin = ahead_pinned.spread_pin([2, 0])
    assert [pin({}, i)[devices.PINNED_ENV] for i in range(3)] == ["2", "0", "2"]


def _started(stderr: str) -> list[int]:
    return [int(p) for p in re.findall(r"worker (\d+): started", stderr)]


@pytest.mark.slow
def test_bench_devices_starts_a_pinned_pool_per_gpu_ahead(tmp_path, fake_plugins):
    fake_plugins("pinned")
    log, out = tmp_path / "pins.log", tmp_path / "run"
    env = {**AHEAD, devices.FAKE_DEVICES_ENV: f"{H200},{H200}", PIN_LOG_ENV: str(log)}
    args = ["--shape", "6,10", "--repeats", "3", "--warmup", "1", "--processes", "2"]
    pair = ["fake_pinned_a", "fake_pinned_b"]
    done = run_gemmreg("bench", *pair, *args, "--devices", "all", "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    ahead = done.stderr.index("starting workers ahead, pinned to GPUs [0, 1]")
    first_point = done.stderr.index("[1/2 gpu")
    # Every worker of the sweep was started ahead (two pools of two), none after.
    assert len(_started(done.stderr)) == 4
    assert all(
        done.stderr.index(f"worker {p}: started") < first_point for p in _started(done.stderr)
    )
    assert ahead < first_point
    seen = _pin_log(log)
    for report in json.loads((out / "run.json").read_text())["reports"]:
        index, m = str(report["device_index"]), report["problem"]["m"]
        assert seen[("fake_pinned_a", f"{m}x{m}x{m}")] == {(index, index)}


@pytest.mark.slow
def test_compare_devices_starts_its_spread_workers_ahead(tmp_path, fake_plugins):
    fake_plugins("pinned")
    log = tmp_path / "pins.log"
    env = {**AHEAD, devices.FAKE_DEVICES_ENV: f"{H200},{H200}", PIN_LOG_ENV: str(log)}
    args = ["--shape", "7x5x3", "--repeats", "3", "--warmup", "1", "--processes", "3"]
    done = run_gemmreg(
        "compare", "fake_pinned_a", "fake_pinned_b", *args, "--devices", "0,1", env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "starting workers ahead, pinned to GPUs [0, 1]" in done.stderr
    assert len(_started(done.stderr)) == 2 + 3  # a cold start per kernel, three processes
    # Processes 0 and 2 on GPU 0, process 1 on GPU 1, the cold starts on GPU 0.
    assert _pin_log(log)[("fake_pinned_a", "7x5x3")] == {("0", "0"), ("1", "1")}


def test_workers_started_ahead_die_with_a_refused_compare(tmp_path, fake_plugins):
    """Two models found once torch is up: compare refuses them, in one line,
    and kills the workers it had started ahead for both GPUs."""
    fake_plugins("pinned")
    env = {**AHEAD, devices.FAKE_DEVICES_ENV: f"{H200},{A100}"}
    pair = ["fake_pinned_a", "fake_pinned_b"]
    done = run_gemmreg("compare", *pair, "--shape", "8x8x8", "--devices", "all", env=env)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "starting workers ahead, pinned to GPUs [0, 1]" in done.stderr
    assert "GPUs of one model only" in done.stderr
    pids = _started(done.stderr)
    assert pids and not [pid for pid in pids if _alive(pid)]
