"""The device-kernel regime of a verdict: the ratio of two kernels' device
time per call, from the CUPTI profiling process (:mod:`gemmreg.running.profiling`).

One process's figure, never a verdict: it is set beside the timed regimes'
verdict (:mod:`gemmreg.judging.verdicts`) and checked against it.
"""

from __future__ import annotations

import math

from gemmreg.contract import numbers
from gemmreg.judging import stats
from gemmreg.judging.timing_records import KernelSummary, RegimeResult

PAIRED_DEVICE_ROUNDS = 5
"""Fewest interleaved rounds from which the device-kernel ratio is the paired
estimate; below that (or in runs saved before the calls were kept) it is the
ratio of the two medians."""


def device_regime(baseline: KernelSummary, other: KernelSummary, confidence: float) -> RegimeResult:
    """The device-kernel ratio: CUPTI runs in one process (its set-up is slow,
    and it must not touch the timed processes), so it is a figure without an
    interval, shown beside the verdict and checked against it. Where the two
    kernels' calls were interleaved, it is the trimmed mean of their per-round
    log-ratios (one round's calls saw the same clocks), as a process's
    estimate is in the timed regimes; and when those rounds alone cannot tell
    it from 1 (Yuen's interval of the trimmed mean includes 1), it is not
    *settled*: a 0.999x beside a FASTER verdict is no contradiction."""
    b, o = baseline.device_kernel_ms, other.device_kernel_ms
    if not (b and o):
        return RegimeResult(regime="device kernels", word="not measured", reason="no profile")
    paired = _paired_log_ratios(baseline, other)
    if paired:
        centre = stats.trimmed_mean(paired)
        half = stats.trimmed_halfwidth(paired, confidence)
        low, high = math.exp(centre - half), math.exp(centre + half)
        return RegimeResult(
            regime="device kernels",
            word="one process",
            estimate=math.exp(centre),
            reason=(
                f"{len(paired)} interleaved rounds in one process (CUPTI), paired: one "
                f"process's figure, not a verdict; its rounds alone span {numbers.span(low, high)}"
            ),
            settled=low > 1.0 or high < 1.0,
        )
    return RegimeResult(
        regime="device kernels",
        word="one process",
        estimate=b / o,
        reason="measured in one process (CUPTI): a figure, not an interval",
    )


def _paired_log_ratios(baseline: KernelSummary, other: KernelSummary) -> list[float]:
    """``log(baseline / other)`` per interleaved round, or [] when the calls
    were not interleaved together (or too few, or a round has no time)."""
    b, o = baseline.device_call_ms, other.device_call_ms
    if not (baseline.device_interleaved and other.device_interleaved):
        return []
    if len(b) != len(o) or len(b) < PAIRED_DEVICE_ROUNDS or min(*b, *o) <= 0:
        return []
    return [math.log(x / y) for x, y in zip(b, o, strict=True)]
