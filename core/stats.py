"""The statistics behind a verdict, on small samples, with no dependencies.

A speed claim compares per-process medians: a handful of numbers. The
bootstrap resamples them to put a 95% interval on the speedup; the verdict
also demands that the process ranges do not overlap.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

BOOTSTRAP_RESAMPLES = 4000
"""Resamples for the speedup interval: plenty for 3-10 process medians."""
CONFIDENCE = 0.95


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def relative_sem(samples: Sequence[float]) -> float:
    """Standard error of the mean over the mean."""
    if len(samples) < 2:
        return math.inf
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / math.sqrt(len(samples)) / mean if mean > 0 else math.inf


def relative_spread(samples: Sequence[float]) -> float:
    """Interquartile range over the median: robust to the odd slow sample."""
    if len(samples) < 4:
        return math.inf
    q1, _, q3 = statistics.quantiles(samples, n=4)
    middle = statistics.median(samples)
    return (q3 - q1) / middle if middle > 0 else math.inf


def bootstrap_speedup(
    baseline: Sequence[float], other: Sequence[float], seed: int = 0
) -> tuple[float, float]:
    """95% interval of median(baseline) / median(other), resampling each set of
    process medians with replacement, independently."""
    rng = random.Random(seed)
    ratios = sorted(
        statistics.median(rng.choices(baseline, k=len(baseline)))
        / statistics.median(rng.choices(other, k=len(other)))
        for _ in range(BOOTSTRAP_RESAMPLES)
    )
    tail = (1 - CONFIDENCE) / 2
    low = ratios[int(tail * (len(ratios) - 1))]
    high = ratios[int((1 - tail) * (len(ratios) - 1))]
    return low, high
