"""A sweep's speedups summed up over its points: the weighted geometric mean
of each pair's speedup, each point counted by its weight (how often a model
calls the shape, from a shapes file; 1 where none was given).

The geometric mean, because speedups are ratios: 2x on one point and 0.5x on
another average to 1x, as they should. Only points with a speedup estimate
count (an INVALID or untimed pair has none), and the line says how many did.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
from gemmreg.timing.timing_records import CompareReport


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


def pair_means(reports: Sequence[CompareReport]) -> list[PairMean]:
    """One mean per pair, in the order the pairs first appear."""
    sums: dict[tuple[str, str], list[float]] = {}
    weighted = False
    for report in reports:
        weight = 1.0 if report.weight is None else report.weight
        weighted = weighted or weight != 1.0
        for verdict in report.verdicts:
            if verdict.speedup is None or not verdict.speedup > 0:
                continue
            total = sums.setdefault((verdict.kernel, verdict.baseline), [0.0, 0.0, 0.0])
            total[0] += weight * math.log(verdict.speedup)
            total[1] += weight
            total[2] += 1
    return [
        PairMean(kernel, baseline, math.exp(log_sum / weight), int(count), weight, weighted)
        for (kernel, baseline), (log_sum, weight, count) in sums.items()
    ]
