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
    left_out: int = 0
    """Points of this pair without a judged speedup (INVALID, no verdict)."""


JUDGED = frozenset({"faster", "slower", "equivalent", "inconclusive", "indistinguishable"})
"""The verdict words whose speedup is a measurement (``indistinguishable``:
schema 1's word for a level pair)."""


def pair_means(reports: Sequence[CompareReport]) -> list[PairMean]:
    """One mean per pair, in the order the pairs first appear."""
    sums: dict[tuple[str, str], list[float]] = {}
    weighted = False
    for report in reports:
        weight = 1.0 if report.weight is None else report.weight
        weighted = weighted or weight != 1.0
        for verdict in report.verdicts:
            total = sums.setdefault((verdict.kernel, verdict.baseline), [0.0, 0.0, 0.0, 0.0])
            speedup = verdict.speedup
            if verdict.verdict not in JUDGED or speedup is None or not speedup > 0:
                total[3] += 1
                continue
            total[0] += weight * math.log(speedup)
            total[1] += weight
            total[2] += 1
    return [
        PairMean(
            kernel, baseline, math.exp(log_sum / weight), int(count), weight, weighted, int(out)
        )
        for (kernel, baseline), (log_sum, weight, count, out) in sums.items()
        if count
    ]
