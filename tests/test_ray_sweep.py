"""``bench --ray``: one warm actor per GPU serves the points, and a lost
actor costs only its point. A real local Ray instance on the CPU, two
pretend GPUs; skipped where Ray is not installed (the optional extra
``gemmreg[ray]``). Nothing here depends on timing: which actor takes which
point may vary, the assertions hold for every order."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import run_gemmreg
from gemmreg.workers import devices

H200 = "NVIDIA H200"
GPUS = 2
PROCESSES = 2
PID_LOG_ENV = "GEMMREG_TEST_PID_LOG"
KILL_MARKER_ENV = "GEMMREG_TEST_KILL_MARKER"
KILL_AT_M_ENV = "GEMMREG_TEST_KILL_AT_M"
TIMING = ["--repeats", "3", "--warmup", "1", "--processes", str(PROCESSES)]
ENV = {devices.FAKE_DEVICES_ENV: ",".join([H200] * GPUS), "GEMMREG_PLUGINS": "none"}


def _pids(log: Path) -> dict[str, set[str]]:
    """Parent pid (the actor) -> the pids of the timing workers it started."""
    by_parent: dict[str, set[str]] = defaultdict(set)
    for line in log.read_text().splitlines():
        _kernel, _shape, pid, parent = line.split()
        by_parent[parent].add(pid)
    return by_parent


DATA_LISTS = frozenset({"outlier_medians_ms"})
"""Lists whose length is a measurement, not the record's shape."""


def _shape(value: Any) -> Any:
    """A saved record's structure: the keys of every mapping, the length of
    every list and the shape of its items, values left out. The process
    medians flagged as outliers are a value, not structure: how many there
    are depends on the timings (a loaded CPU flags some in one run, none in
    the next)."""
    if isinstance(value, dict):
        return {key: None if key in DATA_LISTS else _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return None


@pytest.mark.slow
def test_a_ray_sweep_serves_every_point_from_one_warm_pool_per_actor(tmp_path, fake_plugins):
    """Four points over two pretend GPUs: at most one actor per GPU, each
    with one pool of PROCESSES workers that timed every point it took (a
    pool per point would show 4 x PROCESSES workers); and the run saved in
    the same shape, with the same verdicts, as ``--devices all``'s."""
    pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
    fake_plugins("pinned")
    log = tmp_path / "pids"
    pair = ["fake_pinned_a", "fake_pinned_b"]
    shapes = ["--shape", "6,10,14,18"]
    ray_run, devices_run = tmp_path / "ray", tmp_path / "devices"
    env = {**ENV, PID_LOG_ENV: str(log)}
    done = run_gemmreg(
        "bench", *pair, *shapes, *TIMING, "--ray", "local", "--out", str(ray_run), env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    by_actor = _pids(log)
    assert 1 <= len(by_actor) <= GPUS
    assert all(len(workers) == PROCESSES for workers in by_actor.values()), by_actor
    data = json.loads((ray_run / "run.json").read_text())
    assert data["partial"] is False
    assert [r["problem"]["m"] for r in data["reports"]] == [6, 10, 14, 18]
    nodes = data["manifest"]["ray_nodes"]
    assert {str(n["actor_pid"]) for n in nodes} == set(by_actor)
    assert sum(n["points"] for n in nodes) == 4  # each actor's count of points it served
    assert data["manifest"]["lost_points"] == data["manifest"]["retried_points"] == []

    done = run_gemmreg(
        "bench", *pair, *shapes, *TIMING, "--devices", "all", "--out", str(devices_run), env=ENV
    )
    assert done.returncode == 0, done.stderr[-3000:]
    local = json.loads((devices_run / "run.json").read_text())
    assert _shape(data["reports"]) == _shape(local["reports"])
    for ours, theirs in zip(data["reports"], local["reports"], strict=True):
        assert ours["device_name"] == theirs["device_name"] == H200
        assert [(v["baseline"], v["kernel"], v["verdict"]) for v in ours["verdicts"]] == [
            (v["baseline"], v["kernel"], v["verdict"]) for v in theirs["verdicts"]
        ]


@pytest.mark.slow
def test_an_actor_killed_mid_sweep_costs_only_its_point_which_another_actor_times(
    tmp_path, fake_plugins
):
    """The kernel's first call ever SIGKILLs the actor holding its worker:
    the point in flight goes to another actor and comes back; the run is
    whole, the retry recorded."""
    pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
    fake_plugins("pinned", "kills_ray_worker")
    marker, out = tmp_path / "killed", tmp_path / "run"
    pair = ["fake_pinned_a", "fake_kills_ray_worker"]
    env = {**ENV, KILL_MARKER_ENV: str(marker)}
    done = run_gemmreg(
        "bench", *pair, "--shape", "6,10,14", *TIMING, "--ray", "local", "--out", str(out), env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    killed = marker.read_text().split()
    assert killed[0] == "killed" and len(killed) == 2  # one actor died, once
    data = json.loads((out / "run.json").read_text())
    assert data["partial"] is False
    assert [r["problem"]["m"] for r in data["reports"]] == [6, 10, 14]
    for report in data["reports"]:
        assert {s["status"] for s in report["summaries"]} == {"timed"}
    manifest = data["manifest"]
    assert manifest["lost_points"] == []
    assert len(manifest["retried_points"]) == 1
    assert "its actor died" in manifest["retried_points"][0]
    assert killed[1] not in {str(n["actor_pid"]) for n in manifest["ray_nodes"]}


@pytest.mark.slow
def test_a_point_that_kills_every_actor_is_reported_lost_and_the_others_survive(
    tmp_path, fake_plugins
):
    """The kernel kills its actor at every call of one shape: that point is
    tried on two actors, then reported lost with the reason; the other
    point's figures are saved, and the run is partial and says why."""
    pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
    fake_plugins("pinned", "kills_ray_worker")
    marker, out = tmp_path / "killed", tmp_path / "run"
    pair = ["fake_pinned_a", "fake_kills_ray_worker"]
    env = {**ENV, KILL_MARKER_ENV: str(marker), KILL_AT_M_ENV: "10"}
    done = run_gemmreg(
        "bench", *pair, "--shape", "6,10", *TIMING, "--ray", "local", "--out", str(out), env=env
    )
    assert done.returncode == 130, done.stderr[-3000:]  # partial, as an interrupted run
    kills = [line.split()[1] for line in marker.read_text().splitlines()]
    assert len(kills) == 2 and len(set(kills)) == 2  # two actors, one try each
    data = json.loads((out / "run.json").read_text())
    assert data["partial"] is True
    assert [r["problem"]["m"] for r in data["reports"]] == [6]
    assert {s["status"] for s in data["reports"][0]["summaries"]} == {"timed"}
    manifest = data["manifest"]
    assert [p.split(":")[0] for p in manifest["retried_points"]] == ["[2/2] 10x10x10 fp32"]
    [lost] = manifest["lost_points"]
    assert lost.startswith("[2/2] 10x10x10 fp32: lost on the cluster: its actor died")
    assert lost.endswith("2 times")
    assert "lost on the cluster" in manifest["stopped"]


@pytest.mark.slow
def test_a_ray_sweep_adds_processes_on_its_actors_pools_as_the_local_sweep_does(
    tmp_path, fake_plugins
):
    """``--budget`` (sequential looks) is the local sweep's protocol, run on
    each actor's pool; a Ray task per point could only time a fixed count."""
    pytest.importorskip("ray", reason="Ray is optional (pip install 'gemmreg[ray]')")
    fake_plugins("pinned")
    out = tmp_path / "run"
    pair = ["fake_pinned_a", "fake_pinned_b"]
    timing = ["--repeats", "3", "--warmup", "1", "--budget", "0"]  # the first batch only
    done = run_gemmreg(
        "bench", *pair, "--shape", "6", *timing, "--ray", "local", "--out", str(out), env=ENV
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [report] = json.loads((out / "run.json").read_text())["reports"]
    assert report["budget_s"] == 0
    assert report["looks"] == [report["processes"]] and report["processes"] >= 3
    assert {r["status"] for r in report["records"]} == {"ok"}
