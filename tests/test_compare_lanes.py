"""``compare --devices``: the timed processes run one per GPU at a time, the
GPUs side by side, on pretend GPUs (GEMMREG_FAKE_DEVICES). The plugins of
tests/fake_plugins/lanes.py log, from inside each worker, when it timed them
and on which GPU; only the order of those moments is asserted."""

from __future__ import annotations

import json

import pytest
from conftest import run_gemmreg
from gemmreg.workers import devices

H200 = "NVIDIA H200"
LANES_LOG_ENV = "GEMMREG_TEST_LANES_LOG"
PAIR = ["fake_lanes_a", "fake_lanes_b"]
ARGS = ["--shape", "7x5x3", "--repeats", "3", "--warmup", "1", "--processes", "4"]


def _spans(path):
    """pid -> (pinned GPU, 'cold' or 'warm', first call, last call)."""
    spans: dict[str, tuple[str, str, int, int]] = {}
    for line in path.read_text().splitlines():
        _, pid, pinned, kind, when = line.split()
        _, _, start, end = spans.get(pid, (pinned, kind, int(when), int(when)))
        spans[pid] = (pinned, kind, min(start, int(when)), max(end, int(when)))
    return spans


def _overlap(a, b) -> bool:
    return a[2] < b[3] and b[2] < a[3]


def _shape(report):
    """What the verdicts rest on, without the figures: the same for any lanes."""
    return (
        [(r["kernel"], r["process"], r["status"]) for r in report["runs"]],
        [(r["process"], r["status"], sorted(r["log_ratios"])) for r in report["records"]],
        [(s["kernel"], s["status"], len(s["process_medians_ms"])) for s in report["summaries"]],
        [(v["baseline"], v["kernel"]) for v in report["verdicts"]],
        [c["kernel"] for c in report["cold"]],
    )


@pytest.mark.slow
def test_compare_runs_one_process_per_gpu_at_a_time_the_gpus_side_by_side(tmp_path, fake_plugins):
    fake_plugins("lanes")
    log = tmp_path / "lanes.log"
    env = {devices.FAKE_DEVICES_ENV: f"{H200},{H200}", LANES_LOG_ENV: str(log)}
    done = run_gemmreg("compare", *PAIR, *ARGS, "--devices", "0,1", "--format", "json", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)["report"]
    # Each process's record names its GPU: process i on GPU i mod 2.
    assert [(r["process"], r["device_index"]) for r in report["records"]] == [
        (0, 0),
        (1, 1),
        (2, 0),
        (3, 1),
    ]
    spans = _spans(log)
    cold = [s for s in spans.values() if s[1] == "cold"]
    warm = [s for s in spans.values() if s[1] == "warm"]
    assert len(cold) == 2 and {s[0] for s in cold} == {"0"}  # on process 0's GPU
    assert len(warm) == 4 and sorted(s[0] for s in warm) == ["0", "0", "1", "1"]
    # The cold starts ran apart: one after the other, both before any round.
    assert not _overlap(cold[0], cold[1])
    assert max(s[3] for s in cold) < min(s[2] for s in warm)
    # Never two timed processes on one GPU at once; on two GPUs, side by side.
    for gpu in ("0", "1"):
        first, second = sorted((s for s in warm if s[0] == gpu), key=lambda s: s[2])
        assert first[3] < second[2]
    assert any(_overlap(a, b) for a in warm for b in warm if a[0] != b[0])
    # The same records as one process at a time on one device, figures aside.
    alone = run_gemmreg("compare", *PAIR, *ARGS, "--format", "json")
    assert alone.returncode == 0, alone.stderr[-3000:]
    one_at_a_time = json.loads(alone.stdout)["report"]
    assert _shape(one_at_a_time) == _shape(report)
    assert {r["device_index"] for r in one_at_a_time["records"]} == {None}
