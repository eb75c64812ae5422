"""The lines under a sweep that sum its speedups up over its points
(:func:`gemmreg.timing.weighted.pair_means`), and the one that says what its
per-point verdicts amount to across its points (:mod:`gemmreg.timing.rejudging`)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from gemmreg.contract import numbers
from gemmreg.timing import rejudging, stats
from gemmreg.timing.timing_records import CompareReport
from gemmreg.timing.weighted import pair_means, run_level


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


def sweep_level_lines(reports: Sequence[CompareReport], command: str) -> list[str]:
    """What a sweep's verdicts amount to across its points. Judged point by
    point, each point's claims hold at the run's level, but a claim anywhere
    among its points only within the sum of their error levels (the union
    bound), and ``command`` judges them together; judged together (``bench
    --sweep-wide``, ``report --sweep-wide``), that sum is within the run's
    level, and the line says so. Parts that were each judged together (``bench
    --sweep-wide`` in two commands) keep each part within the level, and the
    line says that, not that each point stood on its own. Nothing for one
    point, or for a run saved without its level."""
    judged = rejudging.judged_reports(reports)
    level = run_level(reports)
    if len(judged) < 2 or level is None:
        return []
    shown = numbers.level_percent(level)
    bound = sum((1.0 - level) / r.family for r in judged)
    if bound <= (1.0 - level) * (1 + 1e-9):
        each = min(stats.family_confidence(level, r.family) for r in judged)
        return [
            f"verdicts: at {shown} across the sweep's {len(judged)} points together "
            f"(each point's at {numbers.significant(100 * each, 8)}%)"
        ]
    said = (
        f"a false claim somewhere among them is bounded by {numbers.significant(100 * bound)}%"
        if bound < 1
        else "their levels together bound nothing"
    )
    families = sorted({r.family for r in judged}, reverse=True)
    how = (
        f"each point's at {shown} on its own"
        if families == [1]
        else f"at {shown} within each part's points judged together ("
        + ", ".join("alone" if f == 1 else numbers.counted(f, "point") for f in families)
        + ")"
    )
    return [
        f"verdicts: {how}; over "
        f"{len(judged)} points {said}: `{command}` judges them at {shown} together"
    ]


def sweep_wide_command(
    runs: Sequence[str], parts: bool = False, margin: float | None = None
) -> str:
    """``gemmreg report RUNS --sweep-wide``, as :func:`sweep_level_lines` names it:
    the runs quoted for a shell, with ``--parts`` and ``--margin`` as given."""
    named = " ".join(shlex.quote(run) for run in runs)
    joined = " --parts" if parts else ""
    judged = f" --margin {margin:g}" if margin is not None else ""
    return f"gemmreg report {named}{joined} --sweep-wide{judged}"
