"""The profiler-free half of the whole-device integrity check
(:mod:`gemmreg.timing.device_activity` has the profiled half): once a call's end
event has completed, a device-wide synchronisation must find (almost) nothing
left to wait for. Every timed process runs it; it needs no CUPTI.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

from gemmreg.contract import backend

SYNC_CHECK_CALLS = 5
"""Calls in the synchronisation check; the median of their extra waits is judged."""
SYNC_LEAST_CALLS = 2
SYNC_BUDGET_S = 0.5
"""Long calls get fewer checks, down to ``SYNC_LEAST_CALLS``, so the check
costs about this many seconds: five calls of a 370 ms kernel cost 2 s a process."""


def calls_for_budget(call_s: float, budget_s: float, least: int, most: int) -> int:
    """As many calls as fit in ``budget_s``, between ``least`` and ``most``."""
    if call_s <= 0:
        return most
    return max(least, min(most, int(budget_s / call_s)))


SYNC_FLOOR_US = 50.0
"""Extra device-wide wait (beyond an idle device's, measured first) tolerated
after the end event completed. An idle ``cudaDeviceSynchronize`` costs about
5-20 us; host scheduling jitter on a busy machine adds tens of microseconds to
single samples. 50 us over the idle baseline, in the median of several calls,
is above that noise; escapes shorter than that are left to the profile."""

SYNC_FRACTION = 0.1
"""Plus this fraction of the call's event time: the synchronisation check is
the coarse, profiler-free backstop, meant to flag escaped work big enough to
distort the event figure (a tenth of it or more) and never to flag a long
kernel for host noise. Small escapes are the profile's job."""


def sync_verdict(extra_wait_us: Sequence[float], event_us: Sequence[float]) -> str | None:
    """Judge the synchronisation check: the reason work escaped, or ``None``.

    ``extra_wait_us[i]``: how much longer than on an idle device the device-wide
    synchronisation took after call ``i``'s end event completed;
    ``event_us[i]``: call ``i``'s event time. Pure, for tests.
    """
    if not extra_wait_us:
        return None
    extra = statistics.median(extra_wait_us)
    event = statistics.median(event_us) if event_us else 0.0
    limit = SYNC_FLOOR_US + SYNC_FRACTION * event
    if extra <= limit:
        return None
    return (
        f"after the call's end event completed, the device was still busy for {extra:.0f} us "
        f"(median of {len(extra_wait_us)} calls; event time {event:.0f} us, tolerance "
        f"{limit:.0f} us): its work escaped the caller's stream"
    )


def _sync_us() -> float:
    import torch

    begin = time.perf_counter()
    torch.cuda.synchronize()
    return (time.perf_counter() - begin) * 1e6


def sync_escape(call: Callable[[], None], calls: int = SYNC_CHECK_CALLS) -> str | None:
    """Profiler-free check: does device work outlive ``call``'s end event?

    For each call: synchronise the device, record events on the current stream
    around the call, wait for the end event only, then time a device-wide
    ``torch.cuda.synchronize()``. Work that escaped the stream makes that wait
    long; the median extra wait over an idle device's is judged by
    :func:`sync_verdict` against ``SYNC_FLOOR_US + SYNC_FRACTION * event time``.
    Escaped work that finishes before the host reaches the synchronisation
    (small problems) is invisible here: :func:`profile_calls` is the precise
    check, this one the backstop that works without CUPTI.

    On the CPU it returns ``None``: launches are synchronous there, so no device
    work can outlive the call (CPU threads a kernel leaves running are not
    device work and are not seen by this check). Exceptions from ``call``
    propagate: a failing call is an error, not an escape.
    """
    if not backend.current().is_gpu:
        return None
    import torch

    torch.cuda.synchronize()
    idle = statistics.median([_sync_us() for _ in range(calls)])
    extra_wait_us, event_us = [], []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        extra_wait_us.append(max(0.0, _sync_us() - idle))
        event_us.append(start.elapsed_time(end) * 1000.0)
    return sync_verdict(extra_wait_us, event_us)
