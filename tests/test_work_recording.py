"""The recording of the timed calls' device work, on stand-ins: the clock
brackets every call with gemmreg's marker kernel outside its events; a trace
made from what the clock queued is charged to the right kernels; the checked
call runs on fresh operands and is verified; and the accounting travels from
a process's result to an INVALID verdict and through a saved run."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from gemmreg.contract.records import Problem
from gemmreg.contract.serialization import from_jsonable, to_jsonable
from gemmreg.instruments.activity_analysis import Activity
from gemmreg.instruments.work_accounting import LaunchPattern, WorkAccounting, invalid_reasons
from gemmreg.reporting import run_schema
from gemmreg.timing import call_recorder, clocks, stats, timed_kernel, work_recording
from gemmreg.timing.call_recorder import Recorder
from gemmreg.timing.device_activity import activities_from_events
from gemmreg.timing.process_results import read_process
from gemmreg.timing.timing_records import ProcessRun
from gemmreg.timing.verdicts import judge
from gemmreg.timing.work_recording import MARKER_NAME
from gemmreg.workers.task_results import KernelTiming, RoundsResult
from test_device_activity import kineto_event
from test_gpu_clock import FakeTorch
from test_verdicts import records, summary

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"
FLUSH = "at::native::reduce_kernel<512, 1, ReduceOp<long, sum_functor>>"


class Marker:
    """The compiled marker kernel, as the recorder launches it: logged."""

    def __init__(self, log: list) -> None:
        self.log = log

    def launch(self, grid, block, args) -> None:
        self.log.append(("marker",))


class Kernel:
    """A kernel as the rounds call it (``kernel.call``, a bound method):
    ``launches(i)`` says which device kernels its ``i``-th call queues."""

    def __init__(self, name: str, log: list, launches) -> None:
        self.name, self.log, self.launches, self.calls = name, log, launches, 0

    def call(self) -> None:
        self.log.append(("call", self.launches(self.calls)))
        self.calls += 1


def test_the_clock_brackets_every_call_with_markers_outside_its_events():
    torch = FakeTorch()
    clock = clocks.GpuClock(l2="clean", torch=torch, hold=None)
    clock.marks = Recorder(torch, Marker(torch.log))
    torch.log.clear()
    k = Kernel("k", torch.log, lambda i: [GEMM])
    clock.samples(k.call, 2)
    shape = [entry[:1] for entry in torch.log]
    sample = [("read",), ("marker",), ("record",), ("call",), ("record",), ("marker",)]
    assert shape == [("spin",), *sample * 2, ("synchronize",)]
    assert clock.marks.owners == ["k", "k"] and clock.marks.checked == [False, False]


def trace_of(log: list) -> list[Activity]:
    """The device activities a GPU would have run for the clock's log, one
    after another on the caller's stream."""
    out, t = [], 0.0
    for entry in log:
        names = {"read": [FLUSH], "marker": [MARKER_NAME], "call": entry[-1]}.get(entry[0], [])
        for name in names:
            out.append(Activity(name=name, kind="kernel", stream=7, start_us=t, end_us=t + 5))
            t += 10
    return out


def test_a_trace_of_what_the_clock_queued_is_charged_to_each_kernel():
    """Two kernels interleaved by slot: one honest, one that skips its GEMM
    once it has run it (the first cheat seen on the H200)."""
    torch = FakeTorch()
    clock = clocks.GpuClock(l2="clean", torch=torch, hold=None)
    recorder = Recorder(torch, Marker(torch.log))
    clock.marks = recorder
    honest = Kernel("honest", torch.log, lambda i: [GEMM])
    skipper = Kernel("skipper", torch.log, lambda i: [GEMM] if i == 0 else [])
    for _ in range(3):
        clock.samples(honest.call, 4)
        clock.samples(skipper.call, 4)
    read = work_recording.read_trace(trace_of(torch.log), recorder)
    assert isinstance(read, dict)
    assert read["honest"].patterns == (LaunchPattern(kernels=[(GEMM, 1)], calls=12),)
    assert invalid_reasons(read["honest"], [((GEMM, 1),)]) == []
    assert read["skipper"].empty == 11 and read["skipper"].calls == 12
    assert invalid_reasons(read["skipper"])[0] == (
        "launched no device work in 11 of 12 recorded timed calls"
    )


def test_no_gpu_or_switched_off_records_nothing_and_a_gpu_kernel_says_why(monkeypatch):
    clock = SimpleNamespace(marks=None)
    assert work_recording.begin(clock, False) == ""  # the CPU: nothing to account for
    monkeypatch.setenv(work_recording.ENV, "off")
    off = work_recording.begin(clock, True)
    assert off == "off (GEMMREG_WORK_ACCOUNTING=off)" and clock.marks is None
    kernel = SimpleNamespace(name="k", result=KernelTiming())
    assert work_recording.finish(off, [kernel], None, 0, "cuda") == off
    assert kernel.result.accounting == WorkAccounting(unavailable=off)
    cpu = SimpleNamespace(name="k", result=KernelTiming())
    assert work_recording.finish("", [cpu], None, 0, "cpu") == ""
    assert cpu.result.accounting is None


def prepared(name: str, launch) -> timed_kernel.TimedKernel:
    from fake_plugins import fp32_spec

    kernel = timed_kernel.TimedKernel(name=name, spec=fp32_spec(name, launch))
    assert timed_kernel.prepare(kernel, PROBLEM, 3, "cpu")
    return kernel


PROBLEM = Problem(m=16, n=8, k=32)


def events(owners: list[str], launches: dict[str, list[str]]) -> list[SimpleNamespace]:
    """Kineto events of one marker-bracketed call per owner."""
    out, t = [], 1_000
    for owner in owners:
        for name in [MARKER_NAME, *launches[owner], MARKER_NAME]:
            out.append(kineto_event(name, start_ns=t, end_ns=t + 500, activity_type="kernel"))
            t += 1_000
    return out


def test_finish_verifies_a_checked_call_on_fresh_operands_and_reads_the_trace(
    fake_plugins, monkeypatch
):
    """A kernel that answers from a cache keyed on nothing passes its
    precheck and its timed calls' postcheck, but not a call on fresh operands."""
    import torch

    cache = {}

    def cached(a, b, out):
        if "c" not in cache:
            cache["c"] = torch.mm(a, b)
        out.copy_(cache["c"])

    honest = prepared("honest", lambda a, b, out: torch.mm(a, b, out=out))
    stale = prepared("stale", cached)
    recorder = Recorder(SimpleNamespace(cuda=SimpleNamespace(synchronize=lambda: None)), Marker([]))
    recorder.owners, recorder.checked = ["honest", "stale"] * 2, [False] * 4
    launches = {"honest": [GEMM], "stale": ["copy_kernel"]}
    kineto = events([*recorder.owners, "honest", "stale"], launches)
    monkeypatch.setattr(recorder, "stop", lambda: activities_from_events(kineto))
    recorder.backend = "CUPTI"
    said = work_recording.finish(recorder, [honest, stale], PROBLEM, 3, "cpu")
    assert said.startswith("on (6 calls, 0 rounds drawn, 18 device activities; CUPTI set-up 0.00 s")
    assert recorder.checked == [False] * 4 + [True, True]
    assert honest.result.status == "ok" and honest.result.accounting.checked == ((GEMM, 1),)
    assert honest.result.accounting.calls == 2
    assert stale.result.status == "failed"
    assert stale.result.reason.startswith("checked call on fresh operands: ")


def test_an_unreadable_trace_leaves_every_kernel_unaccounted_with_the_reason(
    fake_plugins, monkeypatch
):
    import torch

    kernel = prepared("k", lambda a, b, out: torch.mm(a, b, out=out))
    recorder = Recorder(SimpleNamespace(cuda=SimpleNamespace(synchronize=lambda: None)), Marker([]))
    plugin_marker = events(["k"], {"k": [MARKER_NAME]})  # the plugin launched the marker
    monkeypatch.setattr(recorder, "stop", lambda: activities_from_events(plugin_marker))
    work_recording.finish(recorder, [kernel], PROBLEM, 3, "cpu")
    assert kernel.result.accounting.unavailable.startswith("expected 2 marker kernels")


CHEAT = WorkAccounting(
    calls=40,
    empty=0,
    patterns=(LaunchPattern(kernels=[("copy_kernel", 1)], calls=40),),
    checked=[(GEMM, 1)],
)


def test_accounting_goes_from_a_process_result_to_an_invalid_verdict(fake_plugins):
    from fake_plugins import fp32_spec
    from gemmreg.discovery.registry import Origin, RegisteredKernel
    from gemmreg.timing.summaries import summarize

    result = RoundsResult(clock="cuda-events", l2="clean", policy={}, accounting="on (x)")
    result.kernels["k"] = KernelTiming(round_ms=(1.0, 1.1), accounting=CHEAT)
    runs, record = read_process(["k"], 2, result)
    assert runs[0].accounting == CHEAT and record.accounting == "on (x)"
    kernel = RegisteredKernel(
        spec=fp32_spec("k", lambda a, b, out: None),
        origin=Origin(plugin="k", module="k", distribution="d", version="1"),
    )
    got = summarize(kernel, PROBLEM, runs, None, "cpu", {"profile": {"call_kernels": [[GEMM, 1]]}})
    assert got.invalid == (
        f"process 2: 40 of 40 timed calls launched copy_kernel x1, where the checked call "
        f"(fresh operands, output verified) launched {GEMM} x1",
        f"process 2: 40 of 40 timed calls launched copy_kernel x1, where the profiling "
        f"process's calls launched {GEMM} x1",
    )
    base = summary("base")
    new = summary("new", invalid=got.invalid)
    faster = [math.log(5.0) + d for d in (0.001, -0.002, 0.0, 0.002, -0.001)]
    v = judge(base, new, records(faster), confidence=stats.CONFIDENCE, margin=0.01)
    assert v.verdict == "invalid" and "copy_kernel x1" in v.explanation


@pytest.mark.parametrize("accounting", [CHEAT, None])
def test_a_saved_run_keeps_the_accounting_and_older_runs_still_read(accounting):
    run = ProcessRun(kernel="k", process=0, status="timed", round_ms=(1.0,), accounting=accounting)
    data = to_jsonable(run)
    run_schema.check_record(ProcessRun, data, "runs[0]")
    assert from_jsonable(ProcessRun, data) == run
    older = {k: v for k, v in data.items() if k != "accounting"}
    run_schema.check_record(ProcessRun, older, "runs[0]")
    assert from_jsonable(ProcessRun, older).accounting is None


class Named:
    def __init__(self, name):
        self.name = name

    def call(self):
        pass


class SwitchedCupti:
    """The direct recorder's switches, counted."""

    def __init__(self):
        self.on = False
        self.switches = 0

    def resume(self):
        self.on, self.switches = True, self.switches + 1

    def pause(self):
        self.on = False


def test_through_cupti_one_round_in_each_block_is_recorded_and_only_its_calls():
    """Sampling: CUPTI on for one drawn round in every SAMPLE_BLOCK, the
    markers and the call log only there, the checked call always."""
    log: list = []
    recorder = Recorder(
        SimpleNamespace(cuda=SimpleNamespace(synchronize=lambda: None)), Marker(log)
    )
    recorder.direct = direct = SwitchedCupti()
    recorder.active = False
    blocks = 3
    recorded = []
    for index in range(call_recorder.SAMPLE_BLOCK * blocks):
        recorder.round_begins(index)
        recorder.open()
        recorder.close(Named(f"round {index}").call)
        if recorder.active:
            assert direct.on
            recorded.append(index)
        recorder.round_ends()
        assert not direct.on and not recorder.active
    assert [i // call_recorder.SAMPLE_BLOCK for i in recorded] == list(range(blocks))
    assert recorder.owners == [f"round {i}" for i in recorded]
    assert len(log) == 2 * blocks and recorder.rounds_recorded == blocks
    recorder.record_alone()
    assert direct.on and recorder.active


def test_a_cuda_run_without_cupti_python_is_told_what_the_profiler_costs(monkeypatch):
    """The fallback costs seconds a worker and shows to plugins; the line
    names the wheel for this torch's CUDA, and only where it would help."""
    import importlib.util

    import torch
    from gemmreg.commands.launching import warn_if_profiled
    from gemmreg.contract.backend import BackendInfo

    found = {"cupti": None}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: found.get(name, object()))
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.delenv(work_recording.ENV, raising=False)
    cuda = BackendInfo(kind="cuda", device="cuda", device_name="H100", triton_interpreter=False)
    lines: list[str] = []
    warn_if_profiled(cuda, False, lines.append)
    assert len(lines) == 1
    assert "torch's profiler" in lines[0] and 'pip install "cupti-python==13.*"' in lines[0]
    warn_if_profiled(cuda, True, lines.append)  # on Ray the cluster's environment decides
    rocm = BackendInfo(kind="rocm", device="cuda", device_name="MI300X", triton_interpreter=False)
    warn_if_profiled(rocm, False, lines.append)  # no CUPTI to install
    monkeypatch.setenv(work_recording.ENV, "off")
    warn_if_profiled(cuda, False, lines.append)  # nothing recorded at all
    assert len(lines) == 1
    monkeypatch.delenv(work_recording.ENV)
    found["cupti"] = object()  # installed: the recorder uses it
    assert work_recording.profiler_fallback_line("cuda") == ""
    assert work_recording.profiler_fallback_line("cpu") == ""
