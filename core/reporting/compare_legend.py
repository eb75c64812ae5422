"""The legend under ``compare``'s table: what each column and each verdict
word means, with the thresholds this version applies (so the legend cannot
drift from the rules it names)."""

from __future__ import annotations

from collections.abc import Sequence

from gemmreg.contract import numbers
from gemmreg.timing import host_pace, process_outliers, regimes, stats
from gemmreg.timing.timing_records import CompareReport


def legend(report: CompareReport) -> list[str]:
    """The lines under ``report``'s table, before its verdicts."""
    margin = report.margin if report.margin is not None else stats.DEFAULT_MARGIN
    per = " x batch" if report.problem.batch > 1 else ""
    return [
        "median ms: median of the process medians (each the median of the kernel's round figures);",
        f"range: lowest to highest process median; TFLOP/s: 2MNK{per} / median; ideal GB/s: the ideal",
        f"traffic (MK + KN + MN){per} x the dtype's bytes (A and B read once, C written once) / median,",
        "the rate the call needed, not measured DRAM traffic; % of peak: against the",
        *_after("datasheet peak for the row's precision;", _regime_lines(regimes.timed())),
        "host ms: the host's time per call (its launch path), which the samples leave out:",
        "each batch is queued in full before the GPU runs it;",
        *_regime_lines(regimes.profiled()),
        "cold / warm start: prepare + first call in a fresh process with empty caches / reused;",
        "max err: worst |C-ref| / (|A|@|B|) over pre- and postchecks (tol: its declared bound);",
        process_outliers.legend_line(),
        *host_pace.legend_lines(),
        "verdicts: paired per-round log-ratios, averaged per process, Student-t interval across",
        f"processes (Bonferroni over pairs); EQUIVALENT when inside +-{numbers.margin_percent(margin)} (even if it",
        "excludes 1; or its two one-sided tests' narrower interval is), else FASTER/SLOWER",
        "when it excludes 1, else INCONCLUSIVE; INVALID when a",
        "kernel's work escaped its timed interval, a timed call launched less device work than",
        "a checked call on fresh operands, it ran above peak or beyond the memory roof, or its",
        "timed calls took far less than its own device work; NO VERDICT when a kernel",
        "has no timing, or one ran under Triton's interpreter and the other natively.",
        "ceiling: the baseline's median over the least time the work can take at the",
        "datasheet peaks (the kernel's math peak, or A and B read once at the bandwidth).",
        *_sequential(report),
    ]


def _sequential(report: CompareReport) -> list[str]:
    if not report.looks:
        return []
    return [
        "sequential: processes added in batches until every pair was decided or the budget",
        "spent; each look judged at its own level (alpha 6/(pi^2 j^2) at look j), and a pair's",
        "words, interval and confidence are those of the look that decided it.",
    ]


def _regime_lines(among: Sequence[regimes.Regime]) -> list[str]:
    """What each of the regimes ``among`` says of its columns: those measured in
    the timing processes after the primary's figures, those measured in
    processes of their own after host ms, as their columns stand."""
    return [line for regime in among for line in regime.legend()]


def _after(line: str, following: list[str]) -> list[str]:
    """``line``, the first of ``following`` run on after it, then the rest."""
    if not following:
        return [line]
    return [f"{line} {following[0]}", *following[1:]]
