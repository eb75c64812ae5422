"""Two saved runs side by side (two machines, two commits): ``report BEFORE AFTER``.

The two runs' processes are independent of each other, so the change of a
kernel is judged on the log of its process medians with a Welch interval
(:func:`gemmreg.timing.stats.welch`), at the same confidence as a comparison. A
**regression** is a significant slowdown (the interval of before/after lies
below 1) whose size exceeds the threshold. A run too noisy to resolve a
change of the threshold's size gets a noise warning instead of a verdict,
and a point that is partial in either run, or that ran under Triton's
interpreter in one run and natively in the other, gets no verdict at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
from gemmreg.timing import stats
from gemmreg.timing.process_outliers import outlier_note
from gemmreg.timing.timing_records import HELD_WORDS, CompareReport, KernelSummary

DEFAULT_THRESHOLD_PCT = 5.0
"""Slowdowns smaller than this are not called regressions, even when real."""


@attrs.frozen(kw_only=True)
class Change:
    problem: str
    kernel: str
    before: KernelSummary
    after: KernelSummary
    verdict: str
    """``slower``, ``faster``, ``equivalent``, ``inconclusive``, ``noisy`` or ``no verdict``."""
    change_pct: float | None
    """(after / before - 1) in percent of time: positive is slower."""
    interval_pct: tuple[float, float] | None
    """The interval of that change, in percent."""
    regression: bool
    explanation: str = ""
    notes: tuple[str, ...] = ()
    device: str = ""
    """The device model both figures were taken on (:mod:`gemmreg.reporting.device_pairing`);
    '' where the caller paired reports without asking."""


def l2_state(report: CompareReport) -> str:
    """What the flush before each sample left in L2: the run's record, or for
    a GPU run saved before it was recorded ``dirty``, as that
    flush zeroed its buffer; '' on the CPU."""
    if report.l2:
        return report.l2
    return "dirty" if report.clock.startswith("GPU") else ""


_QUEUED = {
    "held": "held until queued",
    "spin": "led by a spin (the host could show)",
    "": "on the CPU",
}


def queueing(report: CompareReport) -> str:
    """How a GPU run queued its samples: ``held`` (every batch queued in full
    before the GPU ran it, :mod:`gemmreg.instruments.stream_hold`) or ``spin``
    (led by a spin: runs saved before batches were held, or a process that could not
    hold its stream, whose slow host could show in short calls); '' on the CPU."""
    if not report.clock.startswith("GPU"):
        return ""
    unheld = any(r.queued for r in report.records)
    return "held" if HELD_WORDS in report.clock and not unheld else "spin"


def _notes(
    old: KernelSummary, new: KernelSummary, before: CompareReport, after: CompareReport
) -> tuple[str, ...]:
    notes = []
    was, now = l2_state(before), l2_state(after)
    if was != now:
        notes.append(
            f"UNLIKE L2 STATE: before timed after a flush that left L2 {was or 'alone'}, "
            f"after one that left it {now or 'alone'} (--l2)"
        )
    was, now = queueing(before), queueing(after)
    if was != now:
        notes.append(
            f"UNLIKE QUEUEING: before's batches of samples were {_QUEUED[was]}, after's {_QUEUED[now]}"
        )
    if old.math != new.math:
        notes.append(
            f"UNLIKE PRECISION: before computes {old.precision}, after computes {new.precision}"
        )
    if old.generator != new.generator:
        notes.append(f"input generators differ: {old.generator} vs {new.generator}")
    for run, s in (("before", old), ("after", new)):
        outlier = outlier_note(s.outlier_medians_ms, s.center_ms)
        notes += [f"{run}: {outlier}"] if outlier else []
    return tuple(notes)


def judge_change(
    old: KernelSummary,
    new: KernelSummary,
    threshold_pct: float,
    partial: bool,
    confidence: float = stats.CONFIDENCE,
) -> tuple[str, tuple[float, float] | None, float | None, str]:
    """(verdict, interval of the change in %, change in %, explanation)."""
    if partial:
        return "no verdict", None, None, "partial run: interrupted before this point was whole"
    if old.status != "timed" or new.status != "timed":
        missing = "before" if old.status != "timed" else "after"
        return "no verdict", None, None, f"{missing} has no timing"
    if old.execution != new.execution:
        how = {"interpreted": "under Triton's interpreter", "native": "natively"}
        return (
            "no verdict",
            None,
            None,
            f"UNLIKE EXECUTION: before ran {how[old.execution]}, after {how[new.execution]}: "
            "the change says nothing about the kernel",
        )
    interval = stats.welch(
        [math.log(v) for v in old.process_medians_ms],
        [math.log(v) for v in new.process_medians_ms],
        confidence,
    )
    if interval is None:
        return "inconclusive", None, None, f"needs {stats.MIN_PROCESSES} processes on each side"
    # interval is of before/after time; the change in time is its inverse.
    change = 100 * (1 / interval.estimate - 1)
    span = (100 * (1 / interval.high - 1), 100 * (1 / interval.low - 1))
    text = f"change {span[0]:+.2f}% to {span[1]:+.2f}% at {confidence:.1%}"
    half = (span[1] - span[0]) / 2
    if interval.high < 1:
        return "slower", span, change, text
    if interval.low > 1:
        return "faster", span, change, text
    if half > threshold_pct:
        return "noisy", span, change, f"{text}: too noisy to resolve a {threshold_pct:g}% change"
    if -threshold_pct <= span[0] and span[1] <= threshold_pct:
        return "equivalent", span, change, f"{text}: inside +-{threshold_pct:g}%"
    return "inconclusive", span, change, text


def compare_runs(
    before: Sequence[CompareReport],
    after: Sequence[CompareReport],
    threshold_pct: float,
) -> list[Change]:
    """One change per (problem, kernel) present in both runs."""
    if not (math.isfinite(threshold_pct) and threshold_pct >= 0):
        raise ValueError(f"threshold must be a finite, non-negative percent, got {threshold_pct}")
    earlier = {(r.problem.label, s.kernel): (r, s) for r in before for s in r.summaries}
    changes = []
    for report in after:
        for summary in report.summaries:
            key = (report.problem.label, summary.kernel)
            if key not in earlier:
                continue
            old_report, old = earlier[key]
            partial = partial_figures(old_report, old) or partial_figures(report, summary)
            word, span, change, why = judge_change(old, summary, threshold_pct, partial)
            changes.append(
                Change(
                    problem=key[0],
                    kernel=summary.kernel,
                    before=old,
                    after=summary,
                    verdict=word,
                    change_pct=change,
                    interval_pct=span,
                    regression=word == "slower" and change is not None and change > threshold_pct,
                    explanation=why,
                    notes=_notes(old, summary, old_report, report),
                )
            )
    return changes


def partial_figures(report: CompareReport, summary: KernelSummary) -> bool:
    """Interrupted, or fewer processes timed than the run asked for: figures
    no change is judged on."""
    return report.partial or (
        summary.status == "timed" and len(summary.process_medians_ms) < report.processes
    )


def lost_timing(changes: Sequence[Change]) -> list[str]:
    """One line per change whose kernel was timed before and has no timing
    after (it failed its check, broke, or became unavailable): no slowdown
    can be judged, and a gate that passed it would pass a kernel that
    stopped working."""
    return [
        f"{c.kernel} at {c.problem}: {c.after.status}"
        + (f" ({c.after.reason})" if c.after.reason else "")
        for c in changes
        if c.before.status == "timed" and c.after.status != "timed"
    ]
