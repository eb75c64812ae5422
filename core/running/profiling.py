"""Each kernel's device work per call, from CUPTI, in a process of its own
(``gemmreg compare``'s profiling process). The timed processes never run
CUPTI: its set-up takes seconds and its callbacks would be timed."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from gemmreg.contract import backend
from gemmreg.contract.records import KernelSpec, Problem
from gemmreg.judging.task_results import KernelProfile, ProfileResult
from gemmreg.running.timing import _Kernel, _prepare


def device_profiles(
    specs: Mapping[str, KernelSpec],
    problem: Problem,
    seed: int,
    note: Callable[[str], None] = lambda text: None,
) -> ProfileResult:
    """Each kernel's device work per call, from CUPTI, in a process of its own.

    Every kernel is prepared and called first, and only then is CUPTI set up
    (through torch's profiler): on the H200, Triton kernels prepared in a
    process whose CUPTI was already set up crashed the process now and then,
    and the set-up takes seconds, which one process pays once here rather
    than every timed process.
    """
    from gemmreg.running import device_activity

    device = backend.current().device
    ready = []
    out: dict[str, KernelProfile] = {}
    for name, spec in specs.items():
        kernel = _Kernel(name=name, spec=spec)
        note(f"preparing {name} for its device profile")
        try:
            if _prepare(kernel, problem, seed, device):
                ready.append(kernel)
            else:
                out[name] = KernelProfile(unavailable=kernel.result.reason)
        except Exception as error:
            out[name] = KernelProfile(unavailable=f"{type(error).__name__}: {error}")
    for kernel in ready:
        note(f"profiling {kernel.name}'s device work")
        calls = device_activity.calls_for_budget(
            _one_call_s(kernel.call),
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


def _one_call_s(call: Callable[[], None]) -> float:
    """Wall seconds of one synchronised call (sizes the profiled sequence)."""
    backend.synchronize()
    start = time.perf_counter()
    call()
    backend.synchronize()
    return time.perf_counter() - start
