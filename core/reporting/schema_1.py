"""Runs saved in schema 1 (before paired rounds), read in today's layout.

Each process's samples stand in for its rounds; fields that no longer exist
are dropped; verdicts keep the words they were judged with. A saved run's
reports pass through :func:`upgrade` before they are checked and rebuilt
(:func:`gemmreg.reporting.runs.load_run`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import attrs
from gemmreg.timing.timing_records import KernelSummary, ProcessRun, Verdict


def _known(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in attrs.fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def upgrade(data: Any) -> Any:
    """A saved report in today's layout: schema 1 is converted, anything else
    (today's, or not a report at all, for the schema check to name) is kept."""
    if isinstance(data, dict) and "schema" not in data and isinstance(data.get("runs"), list):
        with contextlib.suppress(AttributeError, TypeError, KeyError):
            return _from_schema_1(data)
    return data


def _from_schema_1(data: Mapping[str, Any]) -> dict[str, Any]:
    """Runs saved before rounds: each process's samples stand in for its
    rounds, and fields that no longer exist are left out. Their verdicts are
    kept as they were written (words such as "indistinguishable")."""
    runs = [_known(ProcessRun, {**r, "round_ms": r.get("samples_ms", ())}) for r in data["runs"]]
    return {
        **data,
        "schema": 1,
        "runs": runs,
        "summaries": [_known(KernelSummary, s) for s in data["summaries"]],
        "verdicts": [_known(Verdict, v) for v in data["verdicts"]],
    }
