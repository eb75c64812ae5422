"""A sweep's speedups summed up over its points: the weighted geometric mean
of each pair's speedup, each point counted by its weight (how often a model
calls the shape, from a shapes file; 1 where none was given).

The geometric mean, because speedups are ratios: 2x on one point and 0.5x on
another average to 1x, as they should. Only judged points count: FASTER,
SLOWER, EQUIVALENT and INCONCLUSIVE, each with its estimate. An INVALID pair
keeps its estimate in the table (what the kernel seemed to do before the
guards caught it), and a saved interrupted point may keep one too, but
neither is a speed figure: a kernel skipping its work at 90x would pull the
mean up. The line says how many points counted and how many were left out.

The mean has an interval of its own, so that "1.05x over a model's shapes"
can be told from noise as a point's verdict can. Each point's processes are
its own, so the points' estimates are independent: each one's standard
error is read back from its primary interval (a Student-t interval of the
processes' log-ratios: half its log width over the t quantile at its level
and units), the weighted errors add in quadrature, and the degrees of
freedom are Welch-Satterthwaite's. The level is the run's (99.5%),
Bonferroni over the means a sweep lists. It covers the weighted geometric
mean of the points' true speedups; a point decided at an early sequential
look counts with that look's processes. No interval where a counted point
has none (fewer than 3 processes, a run saved without one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
from gemmreg.timing import stats
from gemmreg.timing.timing_records import CompareReport, Verdict


@attrs.frozen
class PairMean:
    kernel: str
    baseline: str
    speedup: float
    """exp(sum w log s / sum w): baseline time over this kernel's, as a verdict's."""
    points: int
    weight: float
    weighted: bool
    """Some point had a weight other than 1."""
    left_out: int = 0
    """Points of this pair without a judged speedup (INVALID, no verdict)."""
    interval: tuple[float, float] | None = None
    """The mean's interval at ``confidence``; None where a counted point has none."""
    confidence: float | None = None
    without_interval: int = 0
    """Counted points that have no interval (so the mean has none)."""


JUDGED = frozenset({"faster", "slower", "equivalent", "inconclusive", "indistinguishable"})
"""The verdict words whose speedup is a measurement (``indistinguishable``:
schema 1's word for a level pair)."""


def run_level(reports: Sequence[CompareReport]) -> float | None:
    """The level the run asked for (99.5%), or None for a run saved without one."""
    return next((r.confidence for r in reports if r.confidence is not None), None)


def pair_means(reports: Sequence[CompareReport]) -> list[PairMean]:
    """One mean per pair, in the order the pairs first appear."""
    sums: dict[tuple[str, str], _Sums] = {}
    weighted = False
    for report in reports:
        weight = 1.0 if report.weight is None else report.weight
        weighted = weighted or weight != 1.0
        for verdict in report.verdicts:
            total = sums.setdefault((verdict.kernel, verdict.baseline), _Sums())
            speedup = verdict.speedup
            if verdict.verdict not in JUDGED or speedup is None or not speedup > 0:
                total.left_out += 1
                continue
            total.log_sum += weight * math.log(speedup)
            total.weight += weight
            total.points += 1
            spread = _variance_and_df(verdict)
            if spread is None:
                total.without_interval += 1
            else:
                total.variances.append((weight * weight * spread[0], spread[1]))
    saved = run_level(reports)
    asked = stats.CONFIDENCE if saved is None else saved
    level = stats.family_confidence(asked, sum(1 for t in sums.values() if t.points))
    return [
        PairMean(
            kernel,
            baseline,
            math.exp(t.log_sum / t.weight),
            t.points,
            t.weight,
            weighted,
            t.left_out,
            None if t.without_interval else _interval(t, level),
            None if t.without_interval else level,
            t.without_interval,
        )
        for (kernel, baseline), t in sums.items()
        if t.points
    ]


@attrs.define
class _Sums:
    log_sum: float = 0.0
    weight: float = 0.0
    points: int = 0
    left_out: int = 0
    without_interval: int = 0
    variances: list[tuple[float, int]] = attrs.Factory(list)
    """Each counted point's weighted variance of its log estimate, w^2 se^2, and its df."""


def _variance_and_df(verdict: Verdict) -> tuple[float, int] | None:
    """The variance of a point's log speedup and its degrees of freedom, read
    back from its primary regime's Student-t interval; None without one."""
    primary = verdict.regimes[0].interval if verdict.regimes else None
    se = None if primary is None else stats.standard_error(primary)
    return None if se is None or primary is None else (se * se, primary.units - 1)


def _interval(sums: _Sums, level: float) -> tuple[float, float]:
    """The weighted mean's interval in ratio: the summed variance over the
    squared weight, Welch-Satterthwaite's degrees of freedom."""
    variance = sum(v for v, _ in sums.variances)
    centre = sums.log_sum / sums.weight
    if variance == 0.0:
        return math.exp(centre), math.exp(centre)
    df = variance**2 / sum(v * v / df for v, df in sums.variances)
    half = stats.t_quantile(0.5 + level / 2, df) * math.sqrt(variance) / sums.weight
    return math.exp(centre - half), math.exp(centre + half)
