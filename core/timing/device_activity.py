"""Whole-device integrity: did a call's device work stay inside its timed interval?

CUDA events time one stream. A kernel that enqueues its work on a private
stream and returns without joining it back looks almost free to them while the
GPU is still busy (seen on an H200: "97x faster than torch.mm"). Two
independent checks catch that:

- :func:`profile_calls` records every device activity (kernels, copies, sets;
  on any stream, launched from any thread) with the profiler torch ships (CUPTI
  on NVIDIA, roctracer on ROCm) around marker kernels on the caller's stream;
  :func:`analyse` (pure, in :mod:`gemmreg.instruments.activity_analysis`) finds activity
  outside its call's interval. The same trace gives the device-kernel time and
  the number of launches per call, so launch-bound results explain themselves.
- :func:`sync_escape` needs no profiler: once a call's end event has completed,
  a device-wide synchronisation must find (almost) nothing left to wait for
  (:mod:`gemmreg.instruments.sync_check`, re-exported here).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TypeVar

from gemmreg.contract import backend
from gemmreg.instruments import cupti_recorder
from gemmreg.instruments.activity_analysis import (
    Activity,
    DeviceProfile,
    analyse,
    analyse_interleaved,
)
from gemmreg.instruments.kineto_trace import activities_from_events, profiler_activities
from gemmreg.instruments.sync_check import (
    SYNC_BUDGET_S,
    SYNC_CHECK_CALLS,
    SYNC_FLOOR_US,
    SYNC_FRACTION,
    SYNC_LEAST_CALLS,
    calls_for_budget,
    sync_escape,
    sync_verdict,
)
from gemmreg.timing.clocks import gpu_spin

T = TypeVar("T")

PROFILE_CALLS = 5
"""The fewest calls in one profiled marker sequence: enough for a median that
one disturbed call cannot move."""
PROFILE_MAX_CALLS = 40
PROFILE_BUDGET_S = 0.2
"""Short calls are profiled more often, up to ``PROFILE_MAX_CALLS`` or about
this many seconds of calls: on the H200 the median of 5 calls of one 7.5 us
kernel under two names differed by 8%, a one-process figure too noisy to
set beside the paired verdict."""

MARKER_CYCLES = 2_000_000
"""Length of each marker spin, in GPU clock cycles (about 1 ms at the 1.4-2 GHz
of current data-centre GPUs). Each call is launched just as its start marker
begins (see :func:`_record`), so the marker spins while the host runs the
call's launch path. Side-stream work that does not wait for the caller's
stream therefore starts visibly before the marker ends, unless that launch
path takes longer than the spin: a millisecond is 20-100x a Python launch
path. Six markers cost about 6 ms per profile."""

MARKER_NAME = "spin_kernel"
"""The marker's name in the device trace. ``torch.cuda._sleep(cycles)`` calls
``at::cuda::sleep``, which launches ``__global__ void spin_kernel(int64_t)`` in
an anonymous namespace of ``at::cuda`` (``aten/src/ATen/cuda/Sleep.cu``) on the
current stream, one block of one thread. CUPTI reports names demangled, so
the trace should read ``at::cuda::(anonymous namespace)::spin_kernel(long)``
(not yet seen on a GPU); :func:`analyse` matches names containing this string,
and a trace with the wrong number of them is unreadable, never clean."""

PROFILE_GRACE_S = 0.005
"""After the last marker, wait this long before the final synchronisation, so
that work another thread launches shortly after a call returned is recorded
(and found after the last marker) instead of falling outside the trace."""


def _record(sequence: Sequence[Callable[[], None]]) -> list[Activity]:
    """Run ``M c1 M c2 ... cN M`` under a device-activity recorder and return
    the device activities: CUPTI directly where ``cupti-python`` is installed
    (:mod:`gemmreg.instruments.cupti_recorder`: milliseconds to switch on, where
    torch's profiler takes seconds), else torch's profiler.

    Private torch API: ``torch.cuda._sleep`` (the marker, behind
    :func:`gemmreg.timing.clocks.gpu_spin`) and, kept here, the profiler's
    kineto results (``prof.profiler.kineto_results.events()``), the only
    place where device timestamps and stream ids of every activity are
    exposed.

    Pacing: marker ``i+1`` is enqueued right after call ``i``, and the host
    then waits (on an event recorded between them) until the caller's stream
    has finished call ``i`` before it launches call ``i+1``. So marker ``i+1``
    starts the moment call ``i``'s work on the caller's stream ends, and side
    work of call ``i`` that was not joined back is still running then (it
    ends after the marker starts: caught even when tiny); and call ``i+1`` is
    launched while its start marker spins, so side work that does not wait for
    the caller's stream starts before that marker ends (caught too). Escaped
    work of one call never lands in another call's interval unseen.
    """
    import torch

    torch.cuda.synchronize()
    direct, _ = cupti_recorder.open_recorder()
    if direct is not None:
        direct.start()
        try:
            _paced(torch, sequence)
        finally:
            torch.cuda.synchronize()
            found = direct.stop()
        return found
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        _paced(torch, sequence)
    return profiler_activities(prof)


def _paced(torch: ModuleType, sequence: Sequence[Callable[[], None]]) -> None:
    """The marker sequence of :func:`_record`, ending synchronised."""
    gpu_spin(torch, MARKER_CYCLES)
    for call in sequence:
        call()
        call_done = torch.cuda.Event()
        call_done.record()
        gpu_spin(torch, MARKER_CYCLES)
        call_done.synchronize()
    time.sleep(PROFILE_GRACE_S)
    torch.cuda.synchronize()


_UNAVAILABLE = "device profile unavailable: "


def profile_calls(call: Callable[[], None], calls: int = PROFILE_CALLS) -> DeviceProfile | str:
    """Device time, launches and escaped work of ``call``, or why they are unknown.

    ``call`` enqueues one kernel call on the current stream (inputs bound).
    Returns a :class:`DeviceProfile` (whose ``escaped`` says whether work left
    its interval), or a reason string starting ``device profile unavailable:``
    when there is no GPU, the profiler or CUPTI / roctracer is missing or fails,
    the trace holds no device activity, or it cannot be read as the marker
    sequence. Never raises: an exception, including one from ``call``, becomes
    ``device profile unavailable: <ExceptionType>: <message>``.
    """
    result = _traced([call] * calls, lambda trace: analyse(trace, MARKER_NAME, calls))
    return _UNAVAILABLE + result if isinstance(result, str) else result


WARM_CALLS = 1
"""Untimed calls of a kernel just before each of its timed calls in an
interleaved profile. They keep the device-kernel time what it was when each
kernel was profiled alone, a call with L2 warm from the kernel's own last
call; without them every call would start from whatever the previous
kernel left in L2 (on the H200, cuBLAS at 128x128x32768 went from 8.1 to
9.9 us per call)."""


def profile_interleaved(
    calls: Mapping[str, Callable[[], None]], rounds: int
) -> dict[str, DeviceProfile] | str:
    """:func:`profile_calls` of several kernels in one trace, round by round.

    Each round calls every kernel ``WARM_CALLS + 1`` times in a row, the
    last one timed, in an order rotated by one kernel per round (no kernel
    always follows the same one), so the timed call ``i`` of each kernel ran
    in round ``i`` and their ratios pair round by round
    (:func:`gemmreg.instruments.activity_analysis.analyse_interleaved`). Every
    call, warm-up or timed, is checked for escaped work. Returns why not (as
    :func:`profile_calls` does) instead of raising.
    """
    names = list(calls)
    per_round = [names[(r + i) % len(names)] for r in range(rounds) for i in range(len(names))]
    owners = [name for name in per_round for _ in range(WARM_CALLS + 1)]
    timed = [i % (WARM_CALLS + 1) == WARM_CALLS for i in range(len(owners))]
    result = _traced(
        [calls[name] for name in owners],
        lambda trace: analyse_interleaved(trace, MARKER_NAME, owners, timed),
    )
    return _UNAVAILABLE + result if isinstance(result, str) else result


def _traced(sequence: Sequence[Callable[[], None]], read: Callable[[list[Activity]], T]) -> T | str:
    """``read`` of the trace of ``sequence``, or why there is none (a string)."""
    try:
        if not backend.current().is_gpu:
            return "no GPU (kernels run on the CPU, where launches are synchronous)"
        activities = _record(sequence)
        if not activities:
            return "the profiler recorded no device activity (CUPTI / roctracer missing?)"
        return read(activities)
    except Exception as error:
        return f"{type(error).__name__}: {error}"


__all__ = [
    "MARKER_CYCLES",
    "MARKER_NAME",
    "PROFILE_BUDGET_S",
    "PROFILE_CALLS",
    "PROFILE_GRACE_S",
    "PROFILE_MAX_CALLS",
    "SYNC_BUDGET_S",
    "SYNC_CHECK_CALLS",
    "SYNC_FLOOR_US",
    "SYNC_FRACTION",
    "SYNC_LEAST_CALLS",
    "WARM_CALLS",
    "Activity",
    "DeviceProfile",
    "activities_from_events",
    "analyse",
    "analyse_interleaved",
    "calls_for_budget",
    "profile_calls",
    "profile_interleaved",
    "sync_escape",
    "sync_verdict",
]
