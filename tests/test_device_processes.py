"""The device-kernel regime from several profiling processes (``--device-processes``):
the processes run in turn with rotated kernel orders, their records merge, and
the regime is judged across them as the timed regimes are."""

from __future__ import annotations

import math

import pytest
from gemmreg.contract.records import Problem
from gemmreg.timing import device_processes, stats, worker_pool
from gemmreg.timing.regime_device import PROCESS_PROFILES, device_regime
from gemmreg.workers.task_results import KernelProfile, ProfileResult
from gemmreg.workers.tasks import TaskOutcome
from test_verdicts import summary, verdict

ROUNDS = 12


def calls(ratio, jitter=0.002):
    """A process's calls for the pair: ``base`` takes ``ratio`` times ``new``'s
    time each round, with an alternating jitter its rounds' interval sees."""
    new = tuple(0.01 for _ in range(ROUNDS))
    base = tuple(0.01 * ratio * (1 + jitter if r % 2 else 1 - jitter) for r in range(ROUNDS))
    return base, new


def across(ratios, **extra):
    """base and new summaries from one profiling process per ratio in ``ratios``."""
    per_process = [calls(r) for r in ratios]
    common = {"device_kernel_ms": 0.01, **extra}
    base = summary("base", device_process_call_ms=[b for b, _ in per_process], **common)
    new = summary("new", device_process_call_ms=[n for _, n in per_process], **common)
    return base, new


def test_rotated_orders_start_each_process_at_the_next_kernel():
    names = ["a", "b", "c"]
    assert [device_processes.rotated(names, p) for p in range(4)] == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
        ["a", "b", "c"],
    ]
    assert device_processes.rotated([], 2) == []


def test_one_process_keeps_its_record_and_several_keep_every_process_beside_the_first():
    one = {"k": {"profile": {"kernel_ms_per_call": 0.1}}}
    assert device_processes.merged([one], ["k"]) == one
    failed = {"k": {"profile_unavailable": "profiling process crashed: boom"}}
    two = {"k": {"profile": {"kernel_ms_per_call": 0.2}}}
    got = device_processes.merged([failed, one, two], ["k"])["k"]
    assert got["profile"] == {"kernel_ms_per_call": 0.1}  # the first process that gave one
    assert got[PROCESS_PROFILES] == [failed["k"], one["k"], two["k"]]
    none = device_processes.merged([failed, {}], ["k"])["k"]
    assert none["profile_unavailable"].startswith("profiling process crashed")
    assert none[PROCESS_PROFILES][1] == {"profile_unavailable": "not profiled"}


def test_consistent_processes_make_the_regime_a_verdict_with_an_interval():
    base, new = across([1.05, 1.052, 1.048, 1.051, 1.049])
    regime = device_regime(base, new, stats.CONFIDENCE)
    assert regime.word == "faster" and regime.interval is not None
    assert regime.interval.low > 1 and regime.estimate == pytest.approx(1.05, rel=2e-3)
    assert "across 5 profiling processes" in regime.reason
    level = across([0.999, 1.001, 1.0, 0.9995, 1.0005])
    assert device_regime(*level, stats.CONFIDENCE).word == "equivalent"


def test_processes_that_disagree_leave_it_inconclusive_whatever_each_ones_rounds_say():
    """A split-K point on the H200 (December 2026): each process's rounds were
    tight (under 0.7%), the processes 0.990-1.016x apart. One process's figure would have
    been settled on either side of 1; across them there is no claim."""
    base, new = across([1.016, 0.990, 1.014, 1.001, 0.999])
    regime = device_regime(base, new, stats.CONFIDENCE)
    assert regime.word == "inconclusive" and regime.interval is not None
    assert regime.interval.low < 1 < regime.interval.high


def test_two_processes_give_an_estimate_that_settles_nothing():
    base, new = across([0.97, 0.971])
    v = verdict([math.log(1.05)] * 5, base=base, new=new)
    regime = v.regimes[-1]
    assert regime.word == "inconclusive" and regime.interval is None and not regime.settled
    assert "2 of 2 profiling processes" in regime.reason and "at least 3" in regime.reason
    assert v.verdict == "faster" and not any(n.startswith("regimes disagree") for n in v.notes)


def test_a_judged_device_regime_that_contradicts_the_verdict_is_stated():
    base, new = across([0.97, 0.971, 0.969])
    v = verdict([math.log(1.05)] * 5, base=base, new=new)
    assert v.verdict == "faster" and v.regimes[-1].word == "slower"
    assert any("device kernels SLOWER 0.97x" in n for n in v.notes)


def test_processes_without_paired_calls_fall_back_to_the_first_process_figure():
    """No process paired the kernels (each profiled alone): the one-process
    path, from the first profile's medians, as before."""
    empty = {"device_process_call_ms": [(), ()]}
    base = summary("base", device_kernel_ms=0.03, **empty)
    new = summary("new", device_kernel_ms=0.01, **empty)
    regime = device_regime(base, new, stats.CONFIDENCE)
    assert regime.word == "one process" and regime.estimate == pytest.approx(3.0)


def test_summaries_keep_each_process_calls_and_escaped_work_from_any_process(fake_plugins):
    from fake_plugins import fp32_spec
    from gemmreg.discovery.registry import Origin, RegisteredKernel
    from gemmreg.timing.summaries import summarize
    from gemmreg.timing.timing_records import ProcessRun

    kernel = RegisteredKernel(
        spec=fp32_spec("k", lambda a, b, out: None),
        origin=Origin(plugin="k", module="k", distribution="d", version="1"),
    )
    runs = [ProcessRun(kernel="k", process=p, status="timed", round_ms=(1.0,)) for p in range(3)]
    paired = {"kernel_ms_per_call": 0.2, "launches_per_call": 1.0, "interleaved": True}
    entries = [
        {"profile": {**paired, "call_ms": [0.1, 0.2]}},
        {"profile_unavailable": "profiling process timed out"},
        {"profile": {**paired, "call_ms": [0.3], "escaped": "busy after the call"}},
        {"profile": {**paired, "interleaved": False, "call_ms": [0.4]}},
    ]
    record = {**entries[0], PROCESS_PROFILES: entries}
    got = summarize(kernel, Problem(m=64, n=64, k=64), runs, None, "cpu", record)
    assert got.device_process_call_ms == ((0.1, 0.2), (), (0.3,), ())
    assert got.invalid == ("device profile, process 3: busy after the call",)
    assert got.device_call_ms == (0.1, 0.2) and got.device_kernel_ms == 0.2


class FakeSession:
    """A profiling session that answers from ``answers`` and logs its tasks."""

    def __init__(self, log, answer):
        self.log, self.answer = log, answer

    def run(self, task, timeout):
        self.log.append(tuple(task.kernels))
        return self.answer(task)

    def close(self):
        pass


def test_each_profiling_session_runs_once_in_turn_with_its_own_order():
    log = []

    def answer(task):
        profiles = {name: KernelProfile(unavailable=f"{len(log)}:{name}") for name in task.kernels}
        return TaskOutcome(status="ok", result=ProfileResult(kernels=profiles))

    pool = worker_pool.Pool(size=0, env={}, gpu=True)
    pool.profilers = [FakeSession(log, answer) for _ in range(3)]
    got = device_processes.profile(pool, ["x", "y"], Problem(m=8, n=8, k=8), seed=1, timeout=5.0)
    assert log == [("x", "y"), ("y", "x"), ("x", "y")]
    assert [e["profile_unavailable"] for e in got["y"][PROCESS_PROFILES]] == ["1:y", "2:y", "3:y"]


def test_a_crashed_profiling_session_is_replaced_and_its_task_run_again(monkeypatch):
    log = []
    crashed = TaskOutcome(status="crashed", error="segfault")
    ok = TaskOutcome(status="ok", result=ProfileResult(kernels={"x": KernelProfile()}))
    pool = worker_pool.Pool(size=0, env={}, gpu=True)
    pool.profilers = [FakeSession(log, lambda t: crashed), FakeSession(log, lambda t: ok)]
    fresh = FakeSession(log, lambda t: ok)
    monkeypatch.setattr(worker_pool.Pool, "fresh", lambda self, process=0: fresh)
    got = device_processes.profile(pool, ["x"], Problem(m=8, n=8, k=8), seed=1, timeout=5.0)
    assert pool.profilers[0] is fresh and len(log) == 3
    assert [e.get("profile_unavailable") for e in got["x"][PROCESS_PROFILES]] == ["", ""]


def test_the_pool_starts_and_stops_profiling_sessions_to_the_count_asked(monkeypatch):
    started, killed = [], []

    class Counted:
        def __init__(self, env):
            started.append(self)

        def kill(self):
            killed.append(self)

    monkeypatch.setattr(worker_pool, "Session", Counted)
    pool = worker_pool.Pool(size=1, env={}, gpu=True)
    pool.start()
    assert len(pool.profilers) == 1 and len(started) == 2  # one timing, one profiling
    pool.fit_profilers(3)
    assert len(pool.profilers) == 3 and len(started) == 4
    pool.fit(1, gpu=True)  # resizing the timing sessions keeps the profilers asked for
    assert len(pool.profilers) == 3
    pool.fit_profilers(0)
    assert pool.profilers == [] and len(killed) == 3
    assert pool.everyone() == pool.sessions


def test_a_saved_run_keeps_each_process_calls_and_the_judged_regime(tmp_path):
    """run.json round trip: the new field and a device regime with an interval
    read back as they were written; a negative device time is refused."""
    import json

    import attrs
    from gemmreg.reporting import runs
    from gemmreg.timing.timing_records import CompareReport

    base, new = across([1.05, 1.052, 1.048])
    v = verdict([math.log(1.05)] * 5, base=base, new=new)
    assert v.regimes[-1].word == "faster"
    report = CompareReport(
        problem=Problem(m=8, n=8, k=8),
        processes=5,
        seed=1,
        clock="test",
        device_name="cpu",
        summaries=(base, new),
        verdicts=(v,),
        runs=(),
    )
    runs.write_run(tmp_path / "run", {"device_name": "cpu"}, [report], partial=False)
    _, (back,), _ = runs.load_run(tmp_path / "run")
    assert back.summaries[0].device_process_call_ms == base.device_process_call_ms
    assert back.verdicts[0].regimes[-1] == v.regimes[-1]
    assert attrs.asdict(back) == attrs.asdict(report)
    data = json.loads((tmp_path / "run" / "run.json").read_text())
    data["reports"][0]["summaries"][0]["device_process_call_ms"][1][0] = -1.0
    (tmp_path / "run" / "run.json").write_text(json.dumps(data))
    with pytest.raises(runs.RunError, match="cannot be negative"):
        runs.load_run(tmp_path / "run", verify=False)  # an edit accepted is still checked


@pytest.mark.parametrize("command", ["compare", "bench"])
def test_the_option_reaches_the_timing_options_and_defaults_to_one(command):
    from gemmreg.cli import build_parser
    from gemmreg.commands.cli_points import timing_asked
    from gemmreg.timing.timing_options import DEFAULT_DEVICE_PROCESSES

    parser = build_parser()
    shape = ["--shape", "64"] if command == "bench" else []
    given = parser.parse_args([command, "a", "b", *shape, "--device-processes", "4"])
    options = timing_asked(given).options(gpu=True, sweep=command == "bench")
    assert options.device_processes == 4
    default = parser.parse_args([command, "a", "b", *shape])
    assert timing_asked(default).options(gpu=True).device_processes == DEFAULT_DEVICE_PROCESSES == 1


def test_the_device_regime_finds_equivalence_as_the_timed_regimes_do():
    """Five profiling processes 0.6% apart: the 99.5% interval reaches past
    +1%, the 99% one of the two one-sided tests does not. End to end the same
    values were EQUIVALENT while the device regime said FASTER, and the
    verdict carried a "regimes disagree" note for it."""
    z = [1.2, -1.2, 0.6, -0.6, 0.0]
    logs = [0.006 + 0.0019 * x for x in z]
    base, new = across([math.exp(v) for v in logs])
    device = device_regime(base, new, stats.CONFIDENCE, stats.DEFAULT_MARGIN)
    timed = verdict(logs)
    assert timed.verdict == "equivalent"
    assert device.word == "equivalent" and "two one-sided tests" in device.reason
    assert device.interval.high <= 1.01 < stats.combine(logs).high
    both = verdict(logs, base=base, new=new)
    assert both.verdict == "equivalent"
    assert not any(n.startswith("regimes disagree") for n in both.notes)
