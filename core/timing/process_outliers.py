"""Process medians that lie far from the rest: a kernel's row whose processes
disagree wildly (one process at 15.92 ms beside others at 0.013 ms) must not
read "ok". Every table flags such a row, and the rule is one function here,
applied to the process medians every saved run keeps, so that runs saved
before the flag existed are flagged when read.

The rule compares each process median with the median of all of them (the
row's median ms). Not with the median of the *other* processes: with three
processes that is the mean of two, and one outlier drags it so far that
every process of the row would be flagged.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from gemmreg.contract.numbers import significant

OUTLIER_FACTOR = 1.5
"""A process median more than this many times above, or below, the median of
the process medians is an outlier. Far above what clocks explain: processes
of one H200 run drift 1-3% apart, and the farthest of the 571 kernels and
points of the H200 runs committed when this was set lies 12% from its row's
median (three processes of the first-protocol sweep, kept in
``tests/fixtures/saved_runs/``), four times closer than this. An outlier means something else happened in that process:
another job on the GPU, a throttled or wrong device, another code path."""


def outlier_medians(medians: Sequence[float], factor: float = OUTLIER_FACTOR) -> tuple[float, ...]:
    """The medians of ``medians`` (a kernel's process medians, in process
    order) more than ``factor`` times above or below the median of them all;
    ``()`` with fewer than two. With two, that median is their mean: a pair
    more than ``2 * factor - 1`` times apart (2x) flags its lower one, more
    than ``factor / (2 - factor)`` times (3x) both."""
    if len(medians) < 2:
        return ()
    center = statistics.median(medians)
    if center <= 0:  # most processes saw no time at all: nothing to be an outlier from
        return ()
    return tuple(m for m in medians if m <= 0 or max(m / center, center / m) > factor)


def outlier_note(outliers: Sequence[float], center_ms: float | None) -> str:
    """``OUTLIER: process median 15.92 ms (1225x above the median)``, one
    part per outlier; '' without any."""
    if not outliers or center_ms is None:
        return ""
    parts = []
    for ms in outliers:
        if ms <= 0 or center_ms <= 0:
            parts.append(f"{significant(ms, 4)} ms (no time the clock could see)")
            continue
        above = ms > center_ms
        ratio = ms / center_ms if above else center_ms / ms
        where = "above" if above else "below"
        parts.append(f"{significant(ms, 4)} ms ({significant(ratio, 3)}x {where} the median)")
    medians = "median" if len(parts) == 1 else "medians"
    return f"OUTLIER: process {medians} {', '.join(parts)}"


def legend_line() -> str:
    """The rule, as the legends under the tables state it."""
    return (
        f"OUTLIER (notes): a process median over {OUTLIER_FACTOR:g}x above or below the median "
        "of the process medians."
    )
