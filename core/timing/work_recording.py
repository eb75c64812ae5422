"""Recording the device work of every timed call, in every timed process.

Why: events time one stream, not work. On an H200 three hostile plugins got
FASTER verdicts at a launch-bound shape with checks that passed: one skipped
its GEMM on a repeated call (no launch), one copied a cached result into C,
one skipped its work only when it was being timed. The profiling process
(:mod:`gemmreg.timing.profiling`) cannot see the last, and none of them
shows in the events. So every timed process records, through CUPTI, the
device work of all its timed calls, and :mod:`gemmreg.instruments.work_accounting` holds each call to the
kernels of a checked call.

How, so that a kernel cannot tell which calls count:

- Through CUPTI used directly (NVIDIA's ``cupti-python``,
  :mod:`gemmreg.instruments.cupti_recorder`), one round in every
  :data:`~gemmreg.timing.call_recorder.SAMPLE_BLOCK` is recorded, drawn at random as its block starts:
  switching CUPTI changes nothing a plugin can read through torch, and the
  draw cannot be foretold, so no call can tell whether it counts, and every
  call of a recorded round is read.
- Through torch's profiler, the fallback, every timed call is recorded
  (heat soak and rounds): it sets flags a plugin can read
  (``torch.autograd.profiler._is_profiler_enabled``) and takes seconds to
  set up, so it cannot be switched unseen; a kernel that behaves only while
  recorded then behaves in every timed call.
- Each sample's call is bracketed by two launches of an empty kernel of
  gemmreg's own, :data:`MARKER_NAME`, on the caller's stream, outside the
  timing events (:class:`gemmreg.timing.clocks.GpuClock`): the flush and
  anything else gemmreg queues between samples lie between one call's
  closing marker and the next one's opening marker, charged to no call.
- After the rounds, each kernel makes one *checked call* inside the same
  recording, on fresh operands (another seed, new tensors), and its output
  is verified: no cache can answer it, so it shows the work the kernel
  really does (a wrong answer fails the kernel, as a postcheck would).
- CUPTI is set up only here, after every kernel was prepared and called
  (the precheck): on the H200, Triton kernels prepared in a process whose
  CUPTI was already set up crashed now and then. The recording stops
  before the graph replays and the sync check.

Cost, once per timed process: the recorder's set-up (milliseconds through
``cupti-python``, seconds through torch's profiler; paid before the heat
soak, which then brings the clocks back), two marker launches per sample
in a recorded round (host time the stream hold keeps out of the events; a
slot then holds a few samples fewer), and reading the trace at the end. The process record
says whether it was on and what it cost (``ProcessRecord.accounting``).
Off with ``GEMMREG_WORK_ACCOUNTING=off`` (for diagnosis: the verdicts then
rest on events alone, and the record says so).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
from gemmreg.instruments.activity_analysis import Activity
from gemmreg.instruments.work_accounting import WorkAccounting, account, attribute
from gemmreg.timing.call_recorder import Recorder
from gemmreg.timing.clocks import CpuClock, GpuClock

if TYPE_CHECKING:
    import torch
    from gemmreg.contract.records import Problem
    from gemmreg.timing.timed_kernel import TimedKernel
    from gemmreg.workers.task_results import Comparison

ENV = "GEMMREG_WORK_ACCOUNTING"
"""``off`` (or ``0``, ``no``) turns the recording off; anything else leaves it on (on GPUs)."""
MARKER_NAME = "gemmreg_call_marker"
MARKER_SOURCE = 'extern "C" __global__ void gemmreg_call_marker() {}'
"""An empty kernel with a name no plugin launches by accident (compiled with
NVRTC/hiprtc, as the stream hold is): it does nothing but show in the trace."""
CHECKED_SEED_OFFSET = 7919
"""The checked call's operands are drawn with the timing seed plus this: other values."""
OFF_WORDS = ("off", "0", "no", "false")


def switched_off() -> bool:
    return os.environ.get(ENV, "").strip().lower() in OFF_WORDS


def profiler_fallback_line(backend_kind: str) -> str:
    """One line for a run about to time on an NVIDIA GPU where the timed
    processes will record through torch's profiler because ``cupti-python``
    is not installed: what that costs (seconds to start in each worker, and
    flags a plugin can read while it records) and the wheel that avoids it,
    for this torch's CUDA. ``""`` elsewhere: on ROCm (no CUPTI), with the
    recording off, or where ``cupti`` imports (a build for another CUDA then
    says why in each process record)."""
    import importlib.util

    if backend_kind != "cuda" or switched_off() or importlib.util.find_spec("cupti") is not None:
        return ""
    import torch

    major = (torch.version.cuda or "").split(".")[0]
    wheel = f'"cupti-python=={major}.*"' if major.isdigit() else "cupti-python"
    return (
        "gemmreg: cupti-python is not installed, so each timed process records its device "
        "work through torch's profiler, which takes seconds to start in every worker and "
        f"which a plugin can see; pip install {wheel} records through CUPTI directly"
    )


def begin(clock: GpuClock | CpuClock, is_gpu: bool) -> Recorder | str:
    """Start recording ``clock``'s samples; or why not ('' on the CPU, whose
    calls are synchronous and launch nothing to account for)."""
    if not is_gpu:
        return ""
    assert not isinstance(clock, CpuClock)  # on a GPU, the timing clock is a GpuClock
    if switched_off():
        return f"off ({ENV}={os.environ.get(ENV)})"
    try:
        from gemmreg.contract.gpu_compile import compile_kernel

        recorder = Recorder(clock.torch, compile_kernel(MARKER_SOURCE, MARKER_NAME))
        recorder.open()  # the marker's module loaded and run once before CUPTI is set up
        recorder.start()
    except Exception as error:  # no NVRTC, no CUPTI: the verdict rests on events alone
        return f"off: {type(error).__name__}: {str(error).splitlines()[0][:160]}"
    clock.marks, recorder.clock = recorder, clock
    return recorder


def checked_call(
    recorder: Recorder, kernel: TimedKernel, problem: Problem, seed: int, device: str
) -> Comparison:
    """One call of ``kernel`` on fresh operands inside the recording; the
    comparison of its output with the reference: the checker's own run
    (:func:`gemmreg.checking.output_check.run_and_compare`), its launch
    bracketed by the markers."""
    from gemmreg.checking.output_check import run_and_compare

    def bracketed(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, *scales: object) -> None:
        recorder.torch.cuda.synchronize()  # the operands made, outside the call
        recorder.record_alone()
        recorder.open()
        try:
            assert kernel.launch is not None  # the kernel was prepared (its precheck ran)
            kernel.launch(a, b, c, *scales)
        finally:  # the markers stay paired whatever the call does
            recorder.close(kernel.call, checked=True)

    kernel.pin()
    return run_and_compare(kernel.spec, bracketed, problem, seed + CHECKED_SEED_OFFSET, device)


def finish(
    recorder: Recorder | str,
    kernels: Sequence[TimedKernel],
    problem: Problem,
    seed: int,
    device: str,
) -> str:
    """The checked calls, then the trace read into each kernel's
    ``result.accounting``; returns what the process record says of it. With
    no recording (``recorder`` says why), each kernel's accounting says why,
    so that every verdict drawn from it carries the flag."""
    if isinstance(recorder, str):
        for kernel in kernels if recorder else ():
            kernel.result.accounting = WorkAccounting(unavailable=recorder)
        return recorder
    notes = {}
    for kernel in kernels:
        try:
            check = checked_call(recorder, kernel, problem, seed, device)
        except Exception as error:  # no room for another operand set: judged without it
            notes[kernel.name] = f"no checked call: {type(error).__name__}: {error}"
            continue
        if not check.passed:
            kernel.result.status = "failed"
            kernel.result.reason = f"checked call on fresh operands: {check.reason}"
    began = time.perf_counter()
    activities: list[Activity] = []
    try:
        activities = recorder.stop() or []
        read = read_trace(activities, recorder)
    except Exception as error:  # a trace that cannot be read leaves the verdicts to events
        read = f"{type(error).__name__}: {error}"
    for kernel in kernels:
        found = read.get(kernel.name) if isinstance(read, dict) else None
        accounting = found or WorkAccounting(
            unavailable=read if isinstance(read, str) else "no call recorded"
        )
        if kernel.name in notes:
            accounting = attrs.evolve(accounting, checked_note=notes[kernel.name])
        kernel.result.accounting = accounting
    read_s = time.perf_counter() - began
    rounds = f", {recorder.rounds_recorded} rounds drawn" if recorder.backend == "CUPTI" else ""
    return (
        f"on ({len(recorder.owners)} calls{rounds}, {len(activities)} device activities; "
        f"{recorder.backend} set-up {recorder.setup_s:.2f} s, trace read {read_s:.2f} s)"
    )


def abandon(recorder: Recorder | str) -> None:
    """Stop a recording that :func:`finish` did not (rounds that were abandoned)."""
    if not isinstance(recorder, str):
        recorder.stop()


def read_trace(
    activities: Sequence[Activity], recorder: Recorder
) -> dict[str, WorkAccounting] | str:
    """Each kernel's accounting from the recorded activities, or why the
    trace cannot be read (:func:`gemmreg.instruments.work_accounting.attribute`)."""
    if not activities:
        return "the profiler recorded no device activity (CUPTI missing?)"
    per_call = attribute(activities, MARKER_NAME, len(recorder.owners))
    if isinstance(per_call, str):
        return per_call
    return account(per_call, recorder.owners, recorder.checked)
