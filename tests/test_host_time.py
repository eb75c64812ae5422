"""The host's time per call: the launch path that a held batch's samples
leave out (``gemmreg.instruments.stream_hold``) is measured apart, per slot, and
reaches the report as ``host ms``."""

from __future__ import annotations

import time
from types import SimpleNamespace

import attrs
from gemmreg.reporting import render_compare
from gemmreg.timing import clocks, process_results, round_loops, timing
from gemmreg.timing.rounds import Round
from gemmreg.timing.timing_records import ProcessRun
from gemmreg.workers.task_results import KernelTiming, RoundsResult
from test_gpu_clock import FakeTorch
from test_unlike_execution import unlike_report
from test_verdicts import summary


def test_the_clock_times_the_host_around_each_call_only() -> None:
    torch = FakeTorch()
    clock = clocks.GpuClock(l2="clean", torch=torch, hold=None)
    assert clock.last_host_ms is None
    clock.samples(lambda: time.sleep(0.002), 3)
    assert clock.last_host_ms is not None and clock.last_host_ms >= 2.0  # ms per call
    clock.samples(lambda: None, 3)
    assert clock.last_host_ms < 2.0  # the flush's and the events' launches are not in it
    assert clocks.CpuClock.last_host_ms is None  # on the CPU a sample is host time


class _HostClock:
    """Every call 1 ms on the GPU; the host's time per call is ``host_ms[name]``."""

    def __init__(self, host_ms: dict[str, float | None]) -> None:
        self.host_ms, self.last_host_ms = host_ms, None

    def samples(self, call, count):
        self.last_host_ms = self.host_ms[call()]
        return [1.0] * count


def test_each_round_keeps_each_slots_host_time() -> None:
    kernels = [SimpleNamespace(name=n, call=lambda n=n: n) for n in ("a", "b")]
    policy = timing.policy_for(gpu=False, repeats=4)
    taken, _ = round_loops.take_rounds(
        kernels, _HostClock({"a": 0.04, "b": 0.012}), policy, {"a": 1e-4, "b": 1e-4}, 3, None
    )
    assert [dict(r.slot_host_ms) for r in taken] == [{"a": 0.04, "b": 0.012}] * 4
    taken, _ = round_loops.take_rounds(
        kernels, _HostClock({"a": None, "b": None}), policy, {"a": 1e-4, "b": 1e-4}, 3, None
    )
    assert all(r.slot_host_ms == {} for r in taken)  # a clock with no host figure


def test_a_process_reports_the_median_over_its_kept_rounds_and_the_report_the_median_process() -> (
    None
):
    def round_(host: float, dropped: str | None = None) -> Round:
        return Round(
            order=("a",),
            slot_ms={"a": 1.0},
            slot_wall_s={"a": 0.01},
            samples={"a": 5},
            slot_host_ms={"a": host},
            dropped=dropped,
        )

    taken = (round_(0.03), round_(0.05), round_(0.04), round_(9.0, dropped="throttled"))
    result = RoundsResult(
        clock="cuda-events",
        l2="clean",
        policy={},
        kernels={"a": KernelTiming(status="ok", round_ms=(1.0, 1.0, 1.0))},
        rounds=taken,
    )
    runs, _ = process_results.read_process(["a"], 0, result)
    assert runs[0].host_ms == 0.04  # the dropped round's 9 ms does not count
    assert isinstance(runs[0], ProcessRun)


def test_the_table_shows_host_ms_and_its_legend_says_what_it_is() -> None:
    report = attrs.evolve(
        unlike_report(), summaries=(summary("base", host_ms=0.0383), summary("new"))
    )
    text = render_compare.compare_table(report, "table")
    assert "host ms" in text and "0.0383" in text
    assert (
        "host ms: the host's time per call (its launch path), which the samples leave out:" in text
    )
    assert "host_ms" in render_compare.compare_table(report, "csv").splitlines()[0]
