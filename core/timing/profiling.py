"""Each kernel's device work per call, from CUPTI, in a process of its own
(``gemmreg compare``'s profiling process): device-kernel time, launches,
escaped work, and the typical call's kernels. The timed processes run CUPTI
too, but only to account for their calls' work
(:mod:`gemmreg.timing.work_recording`): a recording on for their whole
timed phase, read after it, with markers outside the timing events; the
device-kernel figures come from here, where no timing events run beside
CUPTI."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping

from gemmreg.contract import backend
from gemmreg.contract.records import KernelSpec, Problem
from gemmreg.timing.timed_kernel import TimedKernel, prepare
from gemmreg.workers.task_results import KernelProfile, ProfileResult


def device_profiles(
    specs: Mapping[str, KernelSpec],
    problem: Problem,
    seed: int,
    note: Callable[[str], None] = lambda text: None,
) -> ProfileResult:
    """Each kernel's device work per call, from CUPTI, in a process of its own.

    Every kernel is prepared and called first, and only then is CUPTI set up
    (directly, or through torch's profiler without ``cupti-python``:
    :func:`gemmreg.timing.device_activity.profile_calls`): on the H200,
    Triton kernels prepared in a process whose CUPTI was already set up
    crashed the process now and then,
    and torch's profiler takes seconds to set up, which one process pays
    once here rather than every timed process.
    """
    from gemmreg.timing import device_activity

    device = backend.current().device
    ready = []
    out: dict[str, KernelProfile] = {}
    for name, spec in specs.items():
        kernel = TimedKernel(name=name, spec=spec)
        note(f"preparing {name} for its device profile")
        try:
            if prepare(kernel, problem, seed, device):
                ready.append(kernel)
            else:
                out[name] = KernelProfile(unavailable=kernel.result.reason)
        except Exception as error:
            out[name] = KernelProfile(unavailable=f"{type(error).__name__}: {error}")
    call_s = {}
    for kernel in ready:
        kernel.pin()  # each kernel's calls under its own pin (TF32 where declared)
        call_s[kernel.name] = _one_call_s(kernel.call)
    if len(ready) > 1:
        note(f"profiling {', '.join(k.name for k in ready)}'s device work, interleaved")
        together = _interleaved(ready, sum(call_s.values()))
        if together is not None:
            out.update(together)
            return ProfileResult(kernels=out)
    for kernel in ready:
        note(f"profiling {kernel.name}'s device work")
        kernel.pin()
        calls = device_activity.calls_for_budget(
            call_s[kernel.name],
            device_activity.PROFILE_BUDGET_S,
            device_activity.PROFILE_CALLS,
            device_activity.PROFILE_MAX_CALLS,
        )
        profile = device_activity.profile_calls(kernel.call, calls)
        if isinstance(profile, str):
            out[kernel.name] = KernelProfile(unavailable=profile)
        else:
            out[kernel.name] = KernelProfile(profile=profile)
    return ProfileResult(kernels=out)


def capture_calls(
    specs: Mapping[str, KernelSpec],
    problem: Problem,
    seed: int,
    note: Callable[[str], None] = lambda text: None,
) -> ProfileResult:
    """Each kernel prepared, prechecked and called warm, then called
    :data:`~gemmreg.timing.profiler_tools.CAPTURE_CALLS` times inside the
    CUDA profiler range, which is all an outside profiler started with
    ``--profile-from-start off`` sees (:mod:`gemmreg.timing.profiler_tools`).
    The inputs are the timing's: the same problem, seed and operands."""
    from gemmreg.timing.profiler_tools import CAPTURE_CALLS, CAPTURE_WARMUP_CALLS

    info = backend.current()
    out: dict[str, KernelProfile] = {}
    for name, spec in specs.items():
        kernel = TimedKernel(name=name, spec=spec)
        note(f"preparing {name} for the profiler")
        if not prepare(kernel, problem, seed, info.device):
            out[name] = KernelProfile(unavailable=kernel.result.reason)
            continue
        for _ in range(CAPTURE_WARMUP_CALLS):
            kernel.call()
        backend.synchronize()
        note(f"{name} inside the profiler range")
        with _profiler_range(info.kind == "cuda"):
            for _ in range(CAPTURE_CALLS):
                kernel.call()
            backend.synchronize()
        out[name] = KernelProfile()
    return ProfileResult(kernels=out)


@contextlib.contextmanager
def _profiler_range(cuda: bool) -> Iterator[None]:
    """``cudaProfilerStart`` .. ``Stop`` on CUDA; nothing to open elsewhere
    (the CPU backend in tests, where a fake profiler wraps the worker)."""
    if not cuda:
        yield
        return
    import torch

    torch.cuda.profiler.start()
    try:
        yield
    finally:
        torch.cuda.profiler.stop()


def _interleaved(kernels: list[TimedKernel], one_round_s: float) -> dict[str, KernelProfile] | None:
    """Every kernel's profile from one trace, their calls alternating round by
    round (:func:`~gemmreg.timing.device_activity.profile_interleaved`), or
    ``None`` when that trace fails or any kernel's work escaped its calls: then
    each kernel is profiled alone, so that one kernel's stray work (running
    beside the next kernel's call) or a broken trace costs the others nothing.

    Why: the H200's clocks move with load and heat over a second, and a kernel
    profiled after another saw other clocks; one round's calls share them.
    ``one_round_s``: one synchronised call of every kernel, in seconds.
    """
    from gemmreg.timing import device_activity

    def pinned(kernel: TimedKernel) -> Callable[[], None]:
        def call() -> None:
            kernel.pin()  # each call under its own kernel's pin (TF32 where declared)
            kernel.call()

        return call

    rounds = device_activity.calls_for_budget(
        one_round_s * (device_activity.WARM_CALLS + 1),
        device_activity.PROFILE_BUDGET_S * len(kernels),
        device_activity.PROFILE_CALLS,
        device_activity.PROFILE_MAX_CALLS,
    )
    found = device_activity.profile_interleaved({k.name: pinned(k) for k in kernels}, rounds)
    if isinstance(found, str) or any(p.escaped for p in found.values()):
        return None
    return {name: KernelProfile(profile=p) for name, p in found.items()}


def _one_call_s(call: Callable[[], None]) -> float:
    """Wall seconds of one synchronised call (sizes the profiled sequence)."""
    backend.synchronize()
    start = time.perf_counter()
    call()
    backend.synchronize()
    return time.perf_counter() - start
