"""Verdicts revisited after the timing: a saved run judged again from its
per-process records (``gemmreg report --margin``, ``--sweep-wide``), and a
note added to every verdict of a report (one taken beside another process on
the GPU).

Each point of a sweep is judged on its own: its pairs together keep the
chance of any false claim at that point within ``1 - confidence`` (0.5%).
Across a sweep's points the chances add up: over Llama 3 8B's 20 projections
a false claim somewhere is bounded by 10% only. ``--sweep-wide`` judges
every point at the level that keeps the whole sweep within ``1 - confidence``
(Bonferroni over the points judged, then over each point's pairs as always):
the level to read "never SLOWER on all 20 points" or "FASTER everywhere" at.

Pure, like every judge of a verdict: what to print about it is the caller's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from gemmreg.instruments.gpu_trace import busy_reason
from gemmreg.timing import stats
from gemmreg.timing.look_verdicts import interrupted, verdicts
from gemmreg.timing.timing_records import CompareReport
from gemmreg.timing.vetoes import revetted
from gemmreg.timing.weighted import JUDGED

NOT_REJUDGED = "not judged again: this run has no per-process records (saved before rounds)"


def with_note(report: CompareReport, note: str) -> CompareReport:
    """``report`` with ``note`` added to every verdict."""
    notes = tuple(attrs.evolve(v, notes=(*v.notes, note)) for v in report.verdicts)
    return attrs.evolve(report, verdicts=notes)


def shared_gpu_note(manifest: Mapping[str, Any]) -> str | None:
    """The note a verdict taken on a GPU that other processes were using
    carries (from the manifest's GPU record), or None."""
    busy = busy_reason(manifest.get("gpu", {}))
    return f"SHARED GPU: {busy}" if busy else None


def judged_reports(reports: Sequence[CompareReport]) -> list[CompareReport]:
    """The points whose verdicts were judged at a level (some pair could make
    a claim there): the family a claim anywhere in the sweep belongs to. A
    point whose pairs are all INVALID or without a verdict claims nothing."""
    return [
        r
        for r in reports
        if any(v.verdict in JUDGED and v.confidence is not None for v in r.verdicts)
    ]


def judged_points(reports: Sequence[CompareReport]) -> int:
    """How many of ``reports`` :func:`judged_reports` counts."""
    return len(judged_reports(reports))


def rejudge(report: CompareReport, margin: float, points: int | None = None) -> CompareReport:
    """The saved run's verdicts again, from its per-process records, with
    ``margin`` and the rules of this version: a user can ask what a run says
    at another margin without timing again. ``points``: the sweep's judged
    points, when its claims are to hold at the run's level all together
    (each point judged at ``1 - (1 - confidence) / points``); None: as the
    run was judged (its ``family``: 1, or the sweep's points under ``bench
    --sweep-wide``). A sequential run is judged at the looks it took, each at
    its own level. A run saved before per-process records existed keeps its
    verdicts, and says so. Its summaries get the end-to-end vetoes of this
    version (:func:`revetted`) first."""
    if not report.records:
        return with_note(report, NOT_REJUDGED)
    report = revetted(report)
    family = report.family if points is None else points
    asked = stats.CONFIDENCE if report.confidence is None else report.confidence
    confidence = stats.family_confidence(asked, family)
    judged = verdicts(
        report.summaries,
        report.records,
        confidence=confidence,
        margin=margin,
        processes=report.processes,
        looks=report.looks,
        budget_s=report.budget_s,
        look_s=report.look_s,
    )
    if report.partial:
        judged = interrupted(judged, report.records)
    return attrs.evolve(report, verdicts=judged, margin=margin, family=family)
