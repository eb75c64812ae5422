"""The cells that name a problem in every CSV and JSON row (``check``,
``summary.csv``, ``--verdicts``, ``--regimes``), written once so that the
four agree.

A batched or grouped point must never read as its plain ``MxNxK`` twin: a
row says the batch count (1 when not batched), the batch layout (empty when
not batched) and the members' sizes of a grouped problem (``;``-separated,
as ``list`` writes its lists; empty when not grouped). ``dtype`` is the
number format (``fp8e4m3-bf16-rowwise`` for fp8), as the tables show it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gemmreg.reporting.formats import Cell

if TYPE_CHECKING:
    from gemmreg.contract.records import Problem

PROBLEM_COLUMNS = ("m", "n", "k", "dtype", "layout", "batch", "batch_layout", "groups")
"""The leading columns of every row that names a problem."""


def problem_cells(problem: Problem) -> dict[str, Cell]:
    """The :data:`PROBLEM_COLUMNS` of one problem's rows."""
    batched = problem.batch > 1
    return {
        "m": problem.m,
        "n": problem.n,
        "k": problem.k,
        "dtype": problem.number_format,
        "layout": problem.layout,
        "batch": problem.batch,
        "batch_layout": problem.batch_layout if batched else "",
        "groups": ";".join(str(size) for size in problem.groups),
    }
