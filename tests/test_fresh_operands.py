"""Kernels that skip work while timed are caught: new values in A and B before
every round (gemmreg.timing.fresh_values), C poisoned before every timed
sample (GuardedOutput.poison, the clocks), and the postcheck of what the last
timed call left in each placement's C. The hostile kernels and the honest
ones beside them are tests/timing_plugins; each passes gemmreg's check
(test_timing_plugins.py), so what these tests find is about timing."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest
import torch
from conftest import TESTS, only_extra_plugins, run_gemmreg
from gemmreg.checking.guarded_output import GuardedOutput, sentinel_count
from gemmreg.contract.records import Problem
from gemmreg.discovery import judge_state
from gemmreg.discovery.registry import discover
from gemmreg.timing import clocks, fresh_values, regime_graph, round_loops, timed_kernel, timing
from gemmreg.workers.task_results import KernelTiming
from test_gpu_clock import FakeTorch
from test_stream_hold import FakeHold

HOSTILE = {
    "skip_on_repeat": "never written: still the sentinel NaN",
    "cache_by_identity": "elements outside tolerance",
    "detects_timing": "never written: still the sentinel NaN",
}
"""Each kernel that skips work, and what its postcheck must say it saw: the
poison left in C by a call that did nothing, or a C kept from older values."""
HONEST = ("split_k_mm", "mm_extra_pass")
"""Several launches per call, and a second pass over C: all their work, every call."""
MODULES = (
    "skip_on_repeat",
    "cache_by_identity",
    "detects_timing",
    "split_k",
    "extra_pass",
)


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """One ``gemmreg compare`` of torch_ref against every kernel here, on the CPU."""
    out = tmp_path_factory.mktemp("fresh")
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        "GEMMREG_PLUGINS": "torch_ref",
        "GEMMREG_EXTRA_PLUGINS": ",".join(f"timing_plugins.{m}" for m in MODULES),
    }
    kernels = ["torch_ref", *HOSTILE, *HONEST]
    done = run_gemmreg(
        *("compare", *kernels, "--shape", "16x16x256", "--dtype", "fp32"),
        *("--processes", "3", "--repeats", "8", "--out", str(out)),
        env=env,
    )
    report = json.loads((out / "run.json").read_text())["reports"][0]
    return done, report


def test_every_kernel_that_skips_work_fails_its_postcheck_and_gets_no_speed_claim(compared):
    done, report = compared
    assert done.returncode == 1, done.stderr[-2000:]  # a timed kernel failed
    summaries = {s["kernel"]: s for s in report["summaries"]}
    verdicts = {v["kernel"]: v for v in report["verdicts"] if v["baseline"] == "torch_ref"}
    for name, seen in HOSTILE.items():
        assert summaries[name]["status"] == "failed", (name, summaries[name]["reason"])
        reason = summaries[name]["reason"]
        assert "postcheck: placement" in reason and timed_kernel.AS_LEFT in reason, reason
        assert seen in reason, reason
        assert verdicts[name]["verdict"] == "no verdict", verdicts[name]
        assert verdicts[name]["explanation"] == f"{name} has no timing"


def test_honest_kernels_of_several_launches_or_passes_keep_an_ordinary_verdict(compared):
    _, report = compared
    summaries = {s["kernel"]: s for s in report["summaries"]}
    verdicts = {v["kernel"]: v for v in report["verdicts"] if v["baseline"] == "torch_ref"}
    for name in HONEST:
        assert summaries[name]["status"] == "timed", summaries[name]["reason"]
        assert verdicts[name]["verdict"] in ("faster", "slower", "equivalent", "inconclusive")
    for record in report["runs"]:
        if record["kernel"] in HONEST:
            assert record["postcheck"]["passed"], record


def _prepared(name: str, module: str, problem: Problem) -> timed_kernel.TimedKernel:
    with only_extra_plugins([f"timing_plugins.{module}"]):
        spec = discover().get(name).spec
    kernel = timed_kernel.TimedKernel(name=name, spec=spec)
    assert timed_kernel.prepare(kernel, problem, seed=5, device="cpu")
    kernel.sets, kernel.moved = [(kernel.operands, kernel.guarded)], [fresh_values.Shifts()]
    return kernel


def test_without_the_poison_a_kernel_that_skips_repeats_would_pass_the_postcheck(monkeypatch):
    """What catches skip_on_repeat is the poison: new values each round only
    make it compute once per slot, and that one call leaves C right."""
    problem = Problem(m=16, n=16, k=64)
    policy = timing.policy_for(gpu=False, repeats=6)
    kernel = _prepared("skip_on_repeat", "skip_on_repeat", problem)
    cost = {kernel.name: 1e-4}
    with monkeypatch.context() as patched:
        patched.setattr(timed_kernel.TimedKernel, "poison", lambda self: None)
        patched.setattr(judge_state, "changes", list)  # else it names the poison replaced
        round_loops.take_rounds([kernel], clocks.CpuClock(), policy, cost, 3, None)
        assert kernel.verify_every_placement(problem).passed
    round_loops.take_rounds([kernel], clocks.CpuClock(), policy, cost, 3, None)
    check = kernel.verify_every_placement(problem)
    assert not check.passed and "never written" in check.reason


def test_a_graph_replay_that_skips_the_gemm_fails_and_one_that_computes_passes():
    """The graph regime's postcheck, with the replay a plain callable: a graph
    holding nothing (a kernel that skipped while captured) leaves the poison."""
    problem = Problem(m=8, n=12, k=16)
    empty = _prepared("skip_on_repeat", "skip_on_repeat", problem)
    empty.verify_replay(lambda: None, problem, seed=3)
    assert empty.result.status == "failed"
    assert empty.result.reason.startswith("postcheck of a graph replay: ")
    assert "never written" in empty.result.reason
    real = _prepared("split_k_mm", "split_k", problem)
    real.verify_replay(real.call, problem, seed=3)
    assert real.result.status == "ok", real.result.reason


@pytest.mark.parametrize("layout", ["rowmajor", "transposedA", "transposedB", "padded"])
def test_new_values_stay_in_the_same_tensors_and_permute_c(layout):
    problem = Problem(m=5, n=7, k=9, layout=layout)
    kernel = _prepared("split_k_mm", "split_k", problem)
    a, b = kernel.operands
    pointers, versions = (a.data_ptr(), b.data_ptr()), (a._version, b._version)
    old = (a @ b).clone()
    kernel.fresh_values(seed=11, index=0)
    assert kernel.operands[0] is a and kernel.operands[1] is b
    assert (a.data_ptr(), b.data_ptr()) == pointers
    assert a._version > versions[0] and b._version > versions[1]
    new = a @ b
    assert not torch.allclose(new, old)  # C changed: a result kept from before is stale
    assert torch.allclose(new.flatten().sort().values, old.flatten().sort().values)
    kernel.call()  # C from the first new values, then stale after two more rounds
    assert kernel.verify(problem).passed
    kernel.fresh_values(seed=11, index=1)
    kernel.fresh_values(seed=11, index=2)
    now = fresh_values.rotated(kernel.before, kernel.moved[0])  # the copies, moved as far
    assert all(torch.equal(x, y) for x, y in zip(now, (a, b), strict=True))
    stale = kernel.verify(problem)
    assert not stale.passed and "outside tolerance" in stale.reason
    kernel.call()
    assert kernel.verify(problem).passed


def test_shifts_are_reproducible_never_zero_and_move_k_where_c_has_one_element():
    first = [fresh_values.round_shifts(16, 16, 256, seed=7, index=i) for i in range(50)]
    again = [fresh_values.round_shifts(16, 16, 256, seed=7, index=i) for i in range(50)]
    assert first == again
    assert all(1 <= s.rows < 16 and 1 <= s.columns < 16 and s.depth == 0 for s in first)
    assert len(set(first)) > 1
    single = fresh_values.round_shifts(1, 1, 64, seed=7, index=0)
    assert single.rows == single.columns == 0 and 1 <= single.depth < 64
    a, b = torch.randn(1, 64), torch.randn(64, 1)
    before = a @ b
    fresh_values.move((a, b), single)
    assert not torch.allclose(a @ b, before)


def test_the_poison_refills_c_without_moving_its_version_counter():
    guarded = GuardedOutput.allocate(Problem(m=4, n=6, k=3), "cpu")
    guarded.out.fill_(1.0)
    version = guarded.out._version
    guarded.poison()
    assert sentinel_count(guarded.out) == 24 and guarded.guards_intact()
    assert guarded.out._version == version


def test_the_cpu_clock_poisons_before_every_sample_outside_its_interval(monkeypatch):
    log: list[str] = []
    now = [0.0]

    def perf_counter() -> float:
        log.append("clock")
        return now[0]

    monkeypatch.setattr(clocks.time, "perf_counter", perf_counter)
    clocks.CpuClock().samples(lambda: log.append("call"), 3, before=lambda: log.append("poison"))
    assert log == ["poison", "clock", "call", "clock"] * 3


def test_the_gpu_clock_queues_the_poison_per_sample_inside_the_held_batch_before_the_flush():
    torch_ = FakeTorch()
    clock = clocks.GpuClock(l2="clean", torch=torch_, hold=FakeHold(torch_.log))
    torch_.log.clear()
    clock.samples(
        lambda: torch_.log.append(("call",)), 3, before=lambda: torch_.log.append(("poison",))
    )
    kinds = [entry[0] for entry in torch_.log]
    sample = ["poison", "read", "record", "call", "record"]
    assert kinds == ["hold", *sample * 3, "release", "synchronize"]


GRAPH_LOG: list[str] = []
"""What the stand-in graphs did, in order."""


class _FakeGraph:
    """Stands in for a captured CUDA graph: its replays run the call once."""

    def __init__(self, call, calls: int):
        self.calls = calls
        self.graph = SimpleNamespace(replay=lambda: GRAPH_LOG.append(f"replay {call()}"))

    @staticmethod
    def calls_for(call_ms: float) -> int:
        return 2

    def per_call_ms(self, replays: int) -> float:
        GRAPH_LOG.append("timed")
        return 0.01


def test_each_graph_is_handed_to_the_check_after_the_graph_rounds(monkeypatch):
    GRAPH_LOG.clear()
    monkeypatch.setattr(regime_graph, "Graph", _FakeGraph)
    kernels = [
        SimpleNamespace(
            name=name, call=lambda name=name: name, result=KernelTiming(round_ms=(0.01,))
        )
        for name in ("a", "b")
    ]
    checked: list[str] = []

    def check(kernel, replay) -> None:
        checked.append(kernel.name)
        replay()

    policy = SimpleNamespace(slot_s=0.01)
    taken = regime_graph.graph_rounds(kernels, policy, seed=1, check=check, count=3)
    assert len(taken) == 3 and sorted(checked) == ["a", "b"]
    last_timed = max(i for i, entry in enumerate(GRAPH_LOG) if entry == "timed")
    assert GRAPH_LOG[last_timed + 1 :] == [f"replay {name}" for name in checked]
    # the regime's own count where none is given: the policy holds no rounds of it
    assert len(regime_graph.graph_rounds(kernels, policy, seed=1)) == regime_graph.ROUNDS


def test_the_poison_lies_outside_the_markers_and_is_charged_to_no_call():
    """Work accounting charges what lies between a call's markers to the call:
    the poison, queued before the flush and the opening marker, is not."""
    from gemmreg.instruments.activity_analysis import Activity
    from gemmreg.instruments.work_accounting import LaunchPattern
    from gemmreg.timing import work_recording
    from test_work_recording import GEMM, Kernel, Marker

    fill = "at::native::vectorized_elementwise_kernel<4, FillFunctor<short>>"
    torch_ = FakeTorch()
    clock = clocks.GpuClock(l2="clean", torch=torch_, hold=FakeHold(torch_.log))
    recorder = work_recording.Recorder(torch_, Marker(torch_.log))
    clock.marks = recorder
    torch_.log.clear()
    kernel = Kernel("honest", torch_.log, lambda i: [GEMM])
    clock.samples(kernel.call, 3, before=lambda: torch_.log.append(("poison",)))
    sample = ["poison", "read", "marker", "record", "call", "record", "marker"]
    assert [entry[0] for entry in torch_.log] == ["hold", *sample * 3, "release", "synchronize"]
    names = {"poison": [fill], "read": ["flush"], "marker": [work_recording.MARKER_NAME]}
    trace, t = [], 0.0
    for entry in torch_.log:
        for name in entry[-1] if entry[0] == "call" else names.get(entry[0], []):
            trace.append(Activity(name=name, kind="kernel", stream=7, start_us=t, end_us=t + 5))
            t += 10
    read = work_recording.read_trace(trace, recorder)
    assert isinstance(read, dict)
    assert read["honest"].patterns == (LaunchPattern(kernels=[(GEMM, 1)], calls=3),)
