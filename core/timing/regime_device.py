"""The device-kernel regime of a verdict: the ratio of two kernels' device
time per call, from the CUPTI profiling processes (:mod:`gemmreg.timing.profiling`,
:mod:`gemmreg.timing.device_processes`), registered as a regime measured in
processes of its own (:class:`gemmreg.timing.regimes.ProfiledRegime`): its
summary fields from a kernel's profile record, its rule, its columns
(device ms, launches) and its legend line are here.

From several profiling processes (``--device-processes``; 1 by default) it is
judged as the timed regimes are: each process's paired estimate, then a
Student-t interval across processes, and a word. From one process it is a
figure without an interval, set beside the timed regimes' verdict
(:mod:`gemmreg.timing.verdicts`) and checked against it. Either way the
end-to-end regime stays the verdict's own word.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from gemmreg.contract import numbers
from gemmreg.timing import regimes, stats
from gemmreg.timing.timing_records import KernelSummary, RegimeResult

PAIRED_DEVICE_ROUNDS = 5
"""Fewest interleaved rounds from which the device-kernel ratio is the paired
estimate; below that (or in runs saved before the calls were kept) it is the
ratio of the two medians."""
PROCESS_PROFILES = "process_profiles"
"""The record key (``CompareReport.profiles[kernel]``) of every profiling
process's entry for a kernel, in process order, when there were several."""
REGIME = "device kernels"
JUDGED_HOW = f"--device-processes {stats.MIN_PROCESSES} or more judges it"


def process_profiles(record: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Each profiling process's profile from a kernel's record, ``{}`` where
    that process gave none; ``[]`` for a record of one process."""
    entries = (record or {}).get(PROCESS_PROFILES) or []
    return [entry.get("profile") or {} for entry in entries]


def paired_calls(profile: Mapping[str, Any]) -> tuple[float, ...]:
    """A process's per-call device times when its calls alternated round by
    round with the other kernels' (they pair by round), else ``()``."""
    return tuple(profile.get("call_ms") or ()) if profile.get("interleaved") else ()


def device_regime(
    baseline: KernelSummary,
    other: KernelSummary,
    confidence: float,
    margin: float = stats.DEFAULT_MARGIN,
) -> RegimeResult:
    """The device-kernel ratio, across processes where several profiled the
    pair (:func:`_across_processes`), else one process's figure.

    One process's figure: where the two kernels' calls were interleaved, the
    trimmed mean of their per-round log-ratios (one round's calls saw the
    same clocks), as a process's estimate is in the timed regimes; when those
    rounds alone cannot tell it from 1 (Yuen's interval of the trimmed mean
    includes 1), it is not *settled*: a 0.999x beside a FASTER verdict is no
    contradiction."""
    b, o = baseline.device_kernel_ms, other.device_kernel_ms
    if baseline.device_process_call_ms and other.device_process_call_ms:
        judged = _across_processes(baseline, other, confidence, margin)
        if judged is not None:
            return judged
    if not (b and o):
        return RegimeResult(regime=REGIME, word="not measured", reason="no profile")
    paired = _paired_log_ratios(baseline, other)
    if paired:
        centre = stats.trimmed_mean(paired)
        half = stats.trimmed_halfwidth(paired, confidence)
        low, high = math.exp(centre - half), math.exp(centre + half)
        return RegimeResult(
            regime=REGIME,
            word="one process",
            estimate=math.exp(centre),
            reason=(
                f"{len(paired)} interleaved rounds in one process (CUPTI), paired: one "
                f"process's figure, not a verdict ({JUDGED_HOW}); its rounds alone span "
                f"{numbers.ratio_span(low, high)}"
            ),
            settled=low > 1.0 or high < 1.0,
        )
    return RegimeResult(
        regime=REGIME,
        word="one process",
        estimate=b / o,
        reason=f"measured in one process (CUPTI): a figure, not an interval ({JUDGED_HOW})",
    )


def _across_processes(
    baseline: KernelSummary, other: KernelSummary, confidence: float, margin: float
) -> RegimeResult | None:
    """Each profiling process's paired estimate (the trimmed mean of its
    rounds' log-ratios), combined across processes as the timed regimes'
    are; None when no process paired the two kernels' calls. Too few
    processes give an estimate without an interval, which settles nothing."""
    # one entry per profiling process in both (one merged record); a saved run that
    # says otherwise pairs the processes both name
    pairs = zip(baseline.device_process_call_ms, other.device_process_call_ms, strict=False)
    processes = list(pairs)
    estimates = [stats.trimmed_mean(ratios) for b, o in processes if (ratios := _log_ratios(b, o))]
    if not estimates:
        return None
    judged = stats.judge_values(estimates, confidence, margin)
    if judged is None:
        return RegimeResult(
            regime=REGIME,
            word="inconclusive",
            estimate=math.exp(statistics.fmean(estimates)),
            reason=(
                f"{len(estimates)} of {len(processes)} profiling processes paired the "
                f"kernels' calls; an interval needs at least {stats.MIN_PROCESSES} "
                "(--device-processes)"
            ),
            settled=False,
        )
    word, interval, two_one_sided = judged
    how = f" ({stats.TWO_ONE_SIDED})" if two_one_sided else ""
    return RegimeResult(
        regime=REGIME,
        word=word,
        interval=interval,
        estimate=interval.estimate,
        reason=f"across {len(estimates)} profiling processes (CUPTI){how}",
    )


def _paired_log_ratios(baseline: KernelSummary, other: KernelSummary) -> list[float]:
    """``log(baseline / other)`` per interleaved round of the (first)
    profiling process, or [] when the calls were not interleaved together."""
    if not (baseline.device_interleaved and other.device_interleaved):
        return []
    return _log_ratios(baseline.device_call_ms, other.device_call_ms)


def _log_ratios(b: Sequence[float], o: Sequence[float]) -> list[float]:
    """``log(b / o)`` round by round, or [] for unequal or too few rounds, or
    a round without a time."""
    if len(b) != len(o) or len(b) < PAIRED_DEVICE_ROUNDS or min(*b, *o) <= 0:
        return []
    return [math.log(x / y) for x, y in zip(b, o, strict=True)]


@regimes.register
class DeviceKernels(regimes.ProfiledRegime):
    """The summed durations of the device work a call caused (CUPTI), per call."""

    name: ClassVar[str] = REGIME

    def profile_fields(self, profile: Mapping[str, Any] | None) -> Mapping[str, object]:
        """The first profiling process's figures (the one process's, by
        default), and every process's interleaved calls where there were several."""
        device = (profile or {}).get("profile") or {}
        return {
            "device_kernel_ms": device.get("kernel_ms_per_call"),
            "launches_per_call": device.get("launches_per_call"),
            "device_kernels": device.get("kernels", ()),
            "device_call_ms": device.get("call_ms", ()),
            "device_interleaved": bool(device.get("interleaved", False)),
            "device_process_call_ms": tuple(paired_calls(p) for p in process_profiles(profile)),
        }

    def judge(
        self, baseline: KernelSummary, other: KernelSummary, confidence: float, margin: float
    ) -> RegimeResult:
        return device_regime(baseline, other, confidence, margin)

    def columns(self) -> tuple[regimes.Column, ...]:
        return (
            regimes.Column("device ms", "device_kernel_ms", 4),
            regimes.Column("launches", "launches_per_call", 3),
        )

    def values(self, summary: KernelSummary) -> tuple[float | None, ...]:
        return (summary.device_kernel_ms, summary.launches_per_call)

    def legend(self) -> list[str]:
        return ["device ms and launches: device work per call and its launches, from CUPTI;"]
