"""The statistics behind a verdict: paired rounds, processes as the unit.

Within one worker process every compared kernel is timed in the same rounds
(:mod:`gemmreg.timing.rounds`), so each round gives a *paired* log-ratio
``log(t_baseline / t_kernel)``: the power state, clock and temperature of
that round are shared by both figures and cancel. A process's estimate is
the mean of its rounds' log-ratios. Processes are the independent unit:
memory placement, code alignment, a library's algorithm choice and whatever
else is fixed for a process's life differ between processes, so the spread
*between* process estimates is the honest noise, and a Student-t interval
across them is the interval of the speedup. No dependencies: the t quantile
is computed here from the regularized incomplete beta function.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from typing import Literal

import attrs

CONFIDENCE = 0.995
"""Two-sided confidence of a verdict's interval. A claim (faster or slower)
needs the interval to exclude a ratio of 1, so for two identical kernels
with normal process-level noise a claim is made 0.5% of the time; the
simulation in tests/test_statistics.py puts the false-claim rate of the
whole rule, drift and outliers included, under 1%."""
DEFAULT_MARGIN = 0.01
"""Equivalence margin: an interval inside [1/(1+m), 1+m] means EQUIVALENT."""
MIN_PROCESSES = 3
"""Fewer independent processes than this give no interval and no claim."""

Word = Literal["faster", "slower", "equivalent", "inconclusive"]


# ---------------------------------------------------------------------------
# Student's t, from the regularized incomplete beta function
# ---------------------------------------------------------------------------


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Lentz's method for the continued fraction of I_x(a, b)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def _regularized_beta(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (bisection on :func:`t_cdf`).

    Kept per (p, df): a run asks for the same few (one confidence, a few
    process counts) once per pair and point, and 200 bisection steps of the
    incomplete beta each time were most of the calibration tests' time."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"quantile probability must be in (0, 1), got {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


# ---------------------------------------------------------------------------
# Intervals and words
# ---------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Interval:
    """A speedup (baseline time / kernel time) with its two-sided interval."""

    estimate: float
    low: float
    high: float
    confidence: float
    units: int
    """How many independent values it rests on (processes)."""


def mean_halfwidth(values: Sequence[float], confidence: float = CONFIDENCE) -> float:
    """Half-width of the t interval of the mean of ``values`` (inf with < 2)."""
    if len(values) < 2:
        return math.inf
    sd = statistics.stdev(values)
    return t_quantile(0.5 + confidence / 2.0, len(values) - 1) * sd / math.sqrt(len(values))


TRIM = 0.2
"""Fraction trimmed from each end of a process's round log-ratios: a round
hit by a stray host hiccup or a context switch moves the trimmed mean little."""


def _trim_count(n: int, trim: float) -> int:
    return int(trim * n)


def trimmed_mean(values: Sequence[float], trim: float = TRIM) -> float:
    """Mean of the values left after cutting ``trim`` of them from each end."""
    ordered = sorted(values)
    g = _trim_count(len(ordered), trim)
    kept = ordered[g : len(ordered) - g] or ordered
    return statistics.fmean(kept)


def trimmed_halfwidth(
    values: Sequence[float], confidence: float = CONFIDENCE, trim: float = TRIM
) -> float:
    """Half-width of Yuen's interval for the trimmed mean: the winsorized
    standard deviation over (1 - 2 trim) sqrt(n), with n - 2g - 1 degrees of
    freedom (inf with too few values)."""
    n = len(values)
    g = _trim_count(n, trim)
    if n - 2 * g < 2:
        return math.inf
    ordered = sorted(values)
    winsorized = [min(max(v, ordered[g]), ordered[n - 1 - g]) for v in ordered]
    se = statistics.stdev(winsorized) / ((1 - 2 * g / n) * math.sqrt(n))
    return t_quantile(0.5 + confidence / 2.0, n - 2 * g - 1) * se


def combine(process_log_ratios: Sequence[float], confidence: float = CONFIDENCE) -> Interval | None:
    """The speedup interval across processes; None with too few of them."""
    finite = [v for v in process_log_ratios if math.isfinite(v)]
    if len(finite) < MIN_PROCESSES:
        return None
    centre = statistics.fmean(finite)
    half = mean_halfwidth(finite, confidence)
    return Interval(
        estimate=math.exp(centre),
        low=math.exp(centre - half),
        high=math.exp(centre + half),
        confidence=confidence,
        units=len(finite),
    )


def standard_error(interval: Interval) -> float | None:
    """The standard error of the mean log-ratio behind an interval that
    :func:`combine` made: its log half-width over the t quantile at its level
    and units (read back, for summaries across intervals such as a sweep's
    mean speedup). None where it cannot be: fewer than 2 units, an open end."""
    if interval.units < 2 or not 0 < interval.low <= interval.high < math.inf:
        return None
    half = math.log(interval.high / interval.low) / 2
    return half / t_quantile(0.5 + interval.confidence / 2.0, interval.units - 1)


def family_confidence(confidence: float, comparisons: int) -> float:
    """Bonferroni: each of ``comparisons`` intervals at this level keeps the
    chance of any false claim among them at ``1 - confidence``."""
    return 1.0 - (1.0 - confidence) / max(1, comparisons)


def equivalence_confidence(confidence: float) -> float:
    """The confidence of the interval that decides EQUIVALENT at the same
    error level as a claim at ``confidence``: two one-sided tests (Schuirmann's
    TOST). Equivalence is claimed when the ratio is shown above -margin *and*
    below +margin, each a one-sided test at the level ``1 - confidence``; the
    two together are the two-sided interval at ``2 confidence - 1``, whose
    tails hold ``1 - confidence`` each. The two-sided interval at
    ``confidence`` puts half that in each tail, so judging equivalence by it
    tested at half the level stated: a false EQUIVALENT stays under
    ``1 - confidence`` either way, and this way it needs fewer processes
    (about 10% narrower at 9 processes, a third at 3)."""
    return 2.0 * confidence - 1.0


def classify(interval: Interval, margin: float = DEFAULT_MARGIN) -> Word:
    """Equivalence first: an interval inside +-margin is EQUIVALENT even when it
    excludes 1. The margin is the smallest difference the user cares about; on
    the H200 an A/A pair (one kernel under two names) once measured 1.0005x with
    an interval of 1.0001-1.001, and calling that FASTER would be a claim no
    one should act on. Outside the margin, an interval that excludes 1 is a
    claim and any other is no claim."""
    if interval.low >= 1.0 / (1.0 + margin) and interval.high <= 1.0 + margin:
        return "equivalent"
    if interval.low > 1.0:
        return "faster"
    if interval.high < 1.0:
        return "slower"
    return "inconclusive"


TWO_ONE_SIDED = "two one-sided tests"
"""The reason of a word found EQUIVALENT by :func:`equivalence_confidence`'s
interval, which is narrower than the one speed claims are judged by."""


def judge_values(
    log_ratios: Sequence[float], confidence: float, margin: float
) -> tuple[Word, Interval, bool] | None:
    """The word on processes' paired log-ratios, its interval, and whether
    that interval is the two one-sided tests' (None with too few processes).
    One rule for every regime judged across processes: the claim's interval
    at ``confidence`` first, then, where it is no EQUIVALENT, the narrower one
    of :func:`equivalence_confidence`, which may show equivalence at the
    same error level. A regime judged without the second would say FASTER
    beside another regime's EQUIVALENT on the very same values."""
    interval = combine(log_ratios, confidence)
    if interval is None:
        return None
    word = classify(interval, margin)
    if word != "equivalent":
        both_sides = combine(log_ratios, equivalence_confidence(confidence))
        if both_sides is not None and classify(both_sides, margin) == "equivalent":
            return "equivalent", both_sides, True
    return word, interval, False


def welch(
    before: Sequence[float], after: Sequence[float], confidence: float = CONFIDENCE
) -> Interval | None:
    """Interval of exp(mean(before) - mean(after)) for two unpaired sets of log
    times (two saved runs: their processes are independent of each other).
    A value above 1 means *after* is faster."""
    if len(before) < MIN_PROCESSES or len(after) < MIN_PROCESSES:
        return None
    mb, ma = statistics.fmean(before), statistics.fmean(after)
    vb, va = statistics.variance(before) / len(before), statistics.variance(after) / len(after)
    centre = mb - ma
    se = math.sqrt(vb + va)
    if se == 0.0:
        half = 0.0
    else:
        df = (vb + va) ** 2 / (vb**2 / (len(before) - 1) + va**2 / (len(after) - 1) or math.inf)
        half = t_quantile(0.5 + confidence / 2.0, max(1.0, df)) * se
    return Interval(
        estimate=math.exp(centre),
        low=math.exp(centre - half),
        high=math.exp(centre + half),
        confidence=confidence,
        units=min(len(before), len(after)),
    )
