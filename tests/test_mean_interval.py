"""The interval of a sweep's weighted geometric-mean speedup
(:mod:`gemmreg.timing.weighted`): each point's standard error read back from
its own verdict's interval, added in quadrature with the points' weights,
Welch-Satterthwaite's degrees of freedom. Checked against the same sum made
from the processes' values themselves, and by simulation: sweeps of points
with known true speedups, the share of intervals that miss the true weighted
mean."""

from __future__ import annotations

import math
import random
import statistics
from pathlib import Path

import attrs
import pytest
from gemmreg.reporting import runs
from gemmreg.reporting.speedup_means import mean_lines
from gemmreg.timing import stats
from gemmreg.timing.timing_records import CompareReport, RegimeResult
from gemmreg.timing.weighted import pair_means

SWEEP = (
    Path(__file__).resolve().parents[1]
    / "evidence/2026-12-04-h200-tma-split-k-llm-decode/bf16-1-16-128/bench"
)


@pytest.fixture(scope="module")
def point() -> CompareReport:
    """A saved point (one pair) whose verdict the tests replace."""
    return runs.load_run(SWEEP)[1][0]


def _judged(report: CompareReport, logs: list[float], weight: float, confidence: float):
    """``report`` judged again on these processes' log-ratios, as a run
    judges them (the claim's interval, or the two one-sided tests')."""
    word, interval, _ = stats.judge_values(logs, confidence, stats.DEFAULT_MARGIN)
    (verdict,) = report.verdicts
    primary = RegimeResult(regime="end-to-end", word=word, interval=interval)
    verdict = attrs.evolve(
        verdict,
        verdict=word,
        speedup=interval.estimate,
        interval=(interval.low, interval.high),
        confidence=interval.confidence,
        regimes=(primary,),
        processes=len(logs),
    )
    return attrs.evolve(report, verdicts=(verdict,), weight=weight, confidence=confidence)


def test_the_interval_is_the_weighted_sum_of_the_points_own_variances(point):
    """Three points of 3, 5 and 9 processes, weights 1, 2 and 4: the mean's
    interval is the one a statistician would write down from the processes'
    values, whichever interval (claim or equivalence) each verdict kept."""
    logs = [
        [0.031, 0.030, 0.033],  # FASTER
        [0.0012, -0.0008, 0.0004, 0.0009, -0.0002],  # EQUIVALENT, by the narrower interval
        [-0.05, -0.07, -0.02, -0.06, -0.04, -0.09, -0.03, -0.05, -0.06],  # SLOWER
    ]
    weights = [1.0, 2.0, 4.0]
    reports = [_judged(point, v, w, 0.995) for v, w in zip(logs, weights, strict=True)]
    assert [r.verdicts[0].verdict for r in reports] == ["faster", "equivalent", "slower"]
    (mean,) = pair_means(reports)
    total = sum(weights)
    parts = [w * w * statistics.variance(v) / len(v) for v, w in zip(logs, weights, strict=True)]
    df = sum(parts) ** 2 / sum(p * p / (len(v) - 1) for p, v in zip(parts, logs, strict=True))
    centre = sum(w * statistics.fmean(v) for v, w in zip(logs, weights, strict=True)) / total
    half = stats.t_quantile(0.5 + 0.995 / 2, df) * math.sqrt(sum(parts)) / total
    assert mean.confidence == 0.995 and mean.without_interval == 0
    assert mean.speedup == pytest.approx(math.exp(centre), rel=1e-12)
    assert mean.interval == pytest.approx((math.exp(centre - half), math.exp(centre + half)))
    (line,) = mean_lines(reports)
    assert line.startswith("weighted geometric-mean speedup: ")
    assert "(99.5% interval " in line and line.endswith("; 3 points, weight 7)")


def test_a_point_without_an_interval_leaves_the_mean_without_one(point):
    reports = [_judged(point, [0.01, 0.02, 0.015], 1.0, 0.995) for _ in range(2)]
    (verdict,) = reports[1].verdicts
    bare = attrs.evolve(verdict, regimes=(RegimeResult(regime="end-to-end", word="faster"),))
    reports[1] = attrs.evolve(reports[1], verdicts=(bare,))
    (mean,) = pair_means(reports)
    assert mean.interval is None and mean.without_interval == 1 and mean.points == 2
    assert mean_lines(reports)[0].endswith("(2 points; no interval: none at 1 of them)")


def test_intervals_miss_the_true_weighted_mean_about_as_often_as_their_level_says(point):
    """2000 sweeps of 6 points, each point its own true speedup (within
    +-5%), spread (0.3-1.5% a process) and process count (3-9), weights 1-4:
    at 95% an interval misses the true weighted geometric mean in 3-7% of
    sweeps (binomial spread at 2000: about 0.5%); a Welch-Satterthwaite
    error in the degrees of freedom, or a variance without the weights
    squared, would move it out of that band."""
    rng = random.Random(20261206)
    template = [_judged(point, [0.0, 0.001, -0.001], 1.0, 0.95) for _ in range(6)]
    misses, sweeps = 0, 2000
    for _ in range(sweeps):
        reports, truth, total = [], 0.0, 0.0
        for report in template:
            true_log, spread = rng.uniform(-0.05, 0.05), rng.uniform(0.003, 0.015)
            weight = float(rng.randint(1, 4))
            logs = [rng.gauss(true_log, spread) for _ in range(rng.randint(3, 9))]
            reports.append(_judged(report, logs, weight, 0.95))
            truth, total = truth + weight * true_log, total + weight
        (mean,) = pair_means(reports)
        low, high = mean.interval
        misses += not low <= math.exp(truth / total) <= high
    assert 0.03 * sweeps <= misses <= 0.07 * sweeps
