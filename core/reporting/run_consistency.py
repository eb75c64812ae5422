"""What a saved run's reports must agree on among themselves, beyond each
value's type (:mod:`gemmreg.reporting.run_schema`).

A run that passes the schema can still be no run gemmreg could have saved: a
verdict on a kernel the point never timed, one point twice, a weight of zero
or below. Each would print a table and a summary that look like results (a
pair judged twice counts twice in the weighted mean; a weight of zero divides
by zero under it; a negative one turns the mean inside out), so such a run
is refused as a malformed one is, in one line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from gemmreg.timing.shape_rows import MAX_WEIGHT
from gemmreg.timing.timing_records import CompareReport


def refusal(reports: Sequence[CompareReport]) -> str | None:
    """Why these reports cannot be one saved run, or None."""
    seen: set[tuple[str, str, int | None]] = set()
    for index, report in enumerate(reports):
        where = f"reports[{index}] ({report.problem.label})"
        key = (report.problem.label, report.device_name, report.device_index)
        if key in seen:
            return f"{where}: the point appears twice"
        seen.add(key)
        weight = report.weight
        if weight is not None and not (math.isfinite(weight) and 0 < weight <= MAX_WEIGHT):
            return f"{where}: weight must be above 0 up to {MAX_WEIGHT:g}, got {weight!r}"
        if report.processes < 1:
            return f"{where}: processes must be at least 1, got {report.processes}"
        timed = {s.kernel for s in report.summaries}
        for verdict in report.verdicts:
            for name in (verdict.kernel, verdict.baseline):
                if name not in timed:
                    return f"{where}: a verdict names {name!r}, which the point has no summary of"
    return None
