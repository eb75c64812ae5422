"""Runs saved in schema 2 or 1, read in today's layout (schema 3).

Until schema 3 the figure of each regime measured beside the primary one had
a field of its own on each process's run and each kernel's summary
(``graph_ms``); it is now kept by regime name (``regime_ms``), so a regime
is one module (:mod:`gemmreg.timing.regimes`). Each registered regime names
the field it was saved in (``saved_as``), and a saved report's fields move
there before it is checked and rebuilt; schema 1 is then converted as it
always was (:mod:`gemmreg.reporting.schema_1`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gemmreg.reporting import schema_1
from gemmreg.timing import regimes

FIGURES_BY_REGIME = "regime_ms"
"""Where today's records keep each regime's figure."""


def upgrade(data: Any) -> Any:
    """A saved report in today's layout: the regimes' figures moved, then
    schema 1 converted; anything that is not a report is kept, for the
    schema check to name."""
    if isinstance(data, dict):
        data = _by_regime(data)
    return schema_1.upgrade(data)


def _by_regime(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with each old regime field of its runs and summaries moved
    into ``regime_ms``; a record that has ``regime_ms`` already is kept."""
    moved = dict(report)
    for key in ("runs", "summaries"):
        records = report.get(key)
        if isinstance(records, list):
            moved[key] = [_record(r) if isinstance(r, Mapping) else r for r in records]
    return moved


def _record(record: Mapping[str, Any]) -> Mapping[str, Any]:
    old = [r for r in regimes.timed() if r.saved_as and r.saved_as in record]
    if not old or FIGURES_BY_REGIME in record:
        return record
    fields = {k: v for k, v in record.items() if k not in {r.saved_as for r in old}}
    figures = {r.name: record[r.saved_as] for r in old if record[r.saved_as] is not None}
    return {**fields, FIGURES_BY_REGIME: figures}
