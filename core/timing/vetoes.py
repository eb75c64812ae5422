"""Two vetoes that hold where the compute-peak veto cannot reach: at
launch- and memory-bound shapes a kernel that skips its work stays far
below the datasheet's TFLOP/s, so "above peak" never fires there.

- **Beyond the memory roof**: a call must read A and B from memory at least
  once; on a device whose peak bandwidth is known, an end-to-end call
  shorter than those bytes over that bandwidth did not do the work.
- **Regimes disagree on the work**: the end-to-end interval of a call
  contains the device work the call causes, so a timed call much shorter
  than the device time the profiling process (CUPTI) measured for the same
  call did not do the work that was profiled (a plugin that does its work
  only where it is profiled).

Both apply to the end-to-end regime only, the one taken on a cold L2 (every
``--l2`` state evicts A, B and C before each sample: there is no unflushed
end-to-end figure). The warm regimes are no floor: graph replays and the
profiled calls run with A and B possibly in L2 (50 MB on an H200), and in
the committed H200 runs an honest kernel's graph replay read as low as 0.44
of its device time (a grouped-order Triton GEMM at 128x128x32768,
``evidence/2026-12-01-h200-device-kernel-figures/c5``).

A kernel that pins its operands in L2 (a persisting access-policy window)
so that the flush leaves them there beats the memory roof without skipping
work; its figure is then no cold-L2 figure either, and INVALID says so.

Each veto is a reason in ``KernelSummary.invalid``, set where the
compute-peak veto is (:mod:`gemmreg.timing.summaries`) and again when a
saved run is judged again (:func:`revetted`), so the rules of this version
reach saved runs too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from gemmreg.contract import numbers
from gemmreg.contract.records import ELEMENT_BYTES, Problem
from gemmreg.contract.traffic import b_reads
from gemmreg.timing.peaks import device_peaks
from gemmreg.timing.timing_records import CompareReport, KernelSummary

EVENT_RESOLUTION_MS = 0.0005
"""CUDA documents about 0.5 us of resolution for the time between two events:
a figure may read that much short of the truth, so both vetoes grant it.
At the shapes where it matters (a floor of a few microseconds) honest calls
take several times their floor anyway."""
MEMORY_ROOF_FRACTION = 0.95
"""A call is beyond the memory roof when it took less than this fraction of
its bytes over the datasheet bandwidth. Little slack is needed: the datasheet
figure is the interface's ceiling, which no kernel reaches (the best honest
end-to-end call in the committed H200 runs, a grouped Triton GEMM at
Mixtral's decode routing, 32 rows over 6 experts' 4096 x 14336 weights,
streamed at 85% of 4.8 TB/s; split-K at 32x8192x8192 at 82%), and the
table keeps the larger of two quoted figures. The 5% covers a figure rounded
down on its sheet."""
REGIME_FLOOR = 0.75
"""A kernel's fastest process median (end to end) may not be below this
fraction of its device time per call from the profiling process. Its own
kernels run inside its interval, and the end-to-end call starts on a cold L2
where the profiled one was warm, which only lengthens it; what can shorten it
is a different clock in another process (the power-capped H200 moves with its
duty cycle) and another card (``--devices``). Over the 2486 profiled kernel
summaries of the committed H200 runs the lowest honest ratio was 0.933
(the naive HIP kernel at 8192^3 fp32, 367 against 394 ms); the exploits read 0.008-0.014.
A quarter below the device time leaves honest kernels well clear: a kernel
skipping a quarter of its work only where it is timed is not caught here."""


def kernel_vetoes(
    summary: KernelSummary,
    problem: Problem,
    device_name: str,
    profile: Mapping[str, Any] | None,
) -> tuple[str, ...]:
    """Why ``summary``'s end-to-end figures cannot be trusted by these two
    rules, or ``()``. ``profile`` is its record from the profiling process
    (``CompareReport.profiles[kernel]``), if any."""
    if summary.status != "timed" or summary.low_ms is None:
        return ()
    reasons = [memory_roof(summary.low_ms, problem, device_name)]
    device = (profile or {}).get("profile") or {}
    reasons.append(regime_floor(summary.low_ms, _device_busy_ms(summary, device)))
    return tuple(r for r in reasons if r)


def read_bytes(problem: Problem) -> int:
    """The bytes a call must read from memory: A and B, once each (every item's,
    every member's that has rows: an empty member's B is not needed).

    C's write is not counted: L2 is write-back, so up to an L2 of C can still
    sit in L2 when the call's end event fires (the clean flush leaves lines
    that are evicted without a write), and the records do not hold L2's size.
    """
    m, n, k = problem.mnk  # grouped: A stacked, a B per member with rows
    return (problem.batch * m * k + b_reads(problem) * k * n) * ELEMENT_BYTES[problem.dtype]


def memory_floor_ms(problem: Problem, device_name: str) -> float | None:
    """The least time a call can take to read A and B once (:func:`read_bytes`)
    at the device's datasheet bandwidth; None on a device without peaks, or
    with a cache beyond L2 that the flush leaves warm
    (``DevicePeaks.memory_side_cache_mb``), which can serve them faster."""
    peaks = device_peaks(device_name)
    if peaks is None or peaks.memory_side_cache_mb:
        return None
    return read_bytes(problem) / (peaks.memory_tb_s * 1e12) * 1e3


def memory_roof(time_ms: float, problem: Problem, device_name: str) -> str:
    """The veto when a call of ``time_ms`` (end to end, cold L2) is shorter
    than reading A and B at the device's peak bandwidth allows, else ``""``.
    No veto where there is no floor (:func:`memory_floor_ms`)."""
    floor_ms, peaks = memory_floor_ms(problem, device_name), device_peaks(device_name)
    if floor_ms is None or peaks is None:
        return ""
    if time_ms + EVENT_RESOLUTION_MS >= floor_ms * MEMORY_ROOF_FRACTION:
        return ""
    return (
        f"BEYOND MEMORY ROOF: a call reads at least {read_bytes(problem) / 1e6:.4g} MB (A and B "
        f"once): at {peaks.memory_tb_s:g} TB/s that takes {_us(floor_ms)}; timed {_us(time_ms)} "
        "a call end to end, L2 flushed (fastest process)"
    )


def regime_floor(time_ms: float, device_ms: float | None) -> str:
    """The veto when a call timed end to end took much less than its own
    device work in the profiling process (:data:`REGIME_FLOOR`), else ``""``."""
    if not device_ms or time_ms + EVENT_RESOLUTION_MS >= device_ms * REGIME_FLOOR:
        return ""
    return (
        f"REGIMES DISAGREE ON THE WORK: its timed calls took {_us(time_ms)} a call end to "
        f"end (fastest process), its profiled calls' device work {_us(device_ms)} a call "
        f"({numbers.significant(device_ms / time_ms)}x as long): a call's own kernels run "
        "inside it, and launches and a cold L2 only lengthen it, so the timed calls did "
        "not do the work that was profiled"
    )


def _device_busy_ms(summary: KernelSummary, device: Mapping[str, Any]) -> float | None:
    """The device time a call's interval must contain: the union of its
    activities (overlap counted once) where the profile has it; else the
    summed time over the launches per call, which the union is never below
    (it holds the longest activity, at least their mean)."""
    busy = device.get("busy_ms_per_call")
    if isinstance(busy, (int, float)) and busy > 0:
        return float(busy)
    summed, launches = summary.device_kernel_ms, summary.launches_per_call
    if not summed:
        return None
    return summed / max(1.0, launches or 1.0)


def revetted(report: CompareReport) -> CompareReport:
    """``report`` with these vetoes applied to its summaries, as this version
    would have applied them when it was taken (a reason already there is not
    repeated)."""
    summaries = []
    for s in report.summaries:
        found = kernel_vetoes(s, report.problem, report.device_name, report.profiles.get(s.kernel))
        new = tuple(r for r in found if r not in s.invalid)
        summaries.append(attrs.evolve(s, invalid=(*s.invalid, *new)) if new else s)
    return attrs.evolve(report, summaries=tuple(summaries))


def _us(ms: float) -> str:
    return f"{numbers.significant(ms * 1e3)} us"
