"""The lines under a sweep that sum its speedups up over its points
(:func:`gemmreg.timing.weighted.pair_means`)."""

from __future__ import annotations

from collections.abc import Sequence

from gemmreg.contract import numbers
from gemmreg.timing.timing_records import CompareReport
from gemmreg.timing.weighted import pair_means


def mean_lines(reports: Sequence[CompareReport]) -> list[str]:
    """The summary lines under a sweep of more than one point."""
    if len(reports) < 2:
        return []
    lines = []
    for mean in pair_means(reports):
        how = "weighted geometric-mean" if mean.weighted else "geometric-mean"
        over = numbers.counted(mean.points, "point") + (
            f", weight {mean.weight:g}" if mean.weighted else ""
        )
        if mean.interval is not None and mean.confidence is not None:
            span = numbers.ratio_span(*mean.interval)
            over = f"{numbers.level_percent(mean.confidence)} interval {span}; {over}"
        if mean.left_out:
            over += f"; {mean.left_out} left out: INVALID or no verdict"
        if mean.without_interval:
            over += f"; no interval: none at {mean.without_interval} of them"
        lines.append(
            f"{how} speedup: {mean.kernel} vs {mean.baseline}: {mean.speedup:.4g}x ({over})"
        )
    return lines
