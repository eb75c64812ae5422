"""Many saved runs over time: ``report RUN1 RUN2 RUN3 ...`` (three or more).

The runs are split by device model first, report by report
(:func:`gemmreg.reporting.device_pairing.model_of`: a CPU run is its own
``cpu``; a ``--devices`` run over two models is in both models' sections,
each with its own reports): figures from two GPU models are never set side
by side, let alone judged against each other, the rule ``report BEFORE
AFTER`` pairs by too. Inside a device, the runs
are ordered by the time they were taken (the manifest's ``timestamp_utc``),
and each (problem, kernel) is followed through them, keyed by the commit that
ran. Each step is judged against the previous run that timed the same point
by the very rule of ``report BEFORE AFTER``
(:func:`gemmreg.reporting.regression.compare_runs`): a Welch interval on the
log of the process medians, and a regression when the slowdown is
significant and beyond the threshold. A point is partial by its own record,
as there: an interrupted sweep's finished points are whole and judged. A
step between runs on two cards, or under other software, carries a note
saying so (:mod:`gemmreg.reporting.setup_changes`).

Only the newest step of a point can fail a command (:func:`latest_regressions`):
a slowdown that a later commit undid is history, shown and not failed on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from gemmreg.reporting.device_pairing import CPU_DEVICE, UNKNOWN, model_of
from gemmreg.reporting.regression import Change, compare_runs, partial_figures
from gemmreg.reporting.setup_changes import Setup, setup_notes, setup_of
from gemmreg.timing.timing_records import CompareReport, KernelSummary


@attrs.frozen(kw_only=True)
class RunInfo:
    """What a trend needs of one saved run."""

    label: str
    """How the user named it (its path)."""
    commit: str
    timestamp: str
    device: str
    """The model of its first report (the run's, for a run on one model)."""
    reports: tuple[CompareReport, ...]
    partial: bool = False
    models: tuple[str, ...] = ()
    """The device model of each report (:func:`model_of`); empty: all :attr:`device`."""
    setup: Setup = attrs.field(factory=Setup)
    """Its card and software: a step between runs that differ there is noted
    (:mod:`gemmreg.reporting.setup_changes`)."""


@attrs.frozen(kw_only=True)
class TrendPoint:
    """One run's figures of one (problem, kernel), and its change since the
    previous run that timed it (None for the first)."""

    run: str
    commit: str
    timestamp: str
    summary: KernelSummary
    change: Change | None = None


@attrs.frozen(kw_only=True)
class Trend:
    device: str
    problem: str
    kernel: str
    points: tuple[TrendPoint, ...]


def run_info(
    label: str, manifest: Mapping[str, Any], reports: Sequence[CompareReport], partial: bool
) -> RunInfo:
    """A loaded run as the history sees it: device model, commit and time."""
    git = manifest.get("git")
    commit = str(git.get("commit") or UNKNOWN) if isinstance(git, dict) else UNKNOWN
    if isinstance(git, dict) and git.get("dirty") == "true":
        commit += "+dirty"
    each = tuple(model_of(manifest, r) for r in reports)
    if each:
        device = each[0]
    elif manifest.get("backend") == "cpu":
        device = CPU_DEVICE
    else:
        device = str(manifest.get("device_name") or "") or UNKNOWN
    return RunInfo(
        label=label,
        commit=commit,
        timestamp=str(manifest.get("timestamp_utc") or ""),
        device=device,
        reports=tuple(reports),
        partial=partial,
        models=each,
        setup=setup_of(manifest),
    )


def per_model(run: RunInfo) -> list[RunInfo]:
    """``run`` as one run per device model of its reports, each holding that
    model's reports alone."""
    if not run.models or len(set(run.models)) == 1:
        return [run]
    return [
        attrs.evolve(
            run,
            device=model,
            reports=tuple(r for r, m in zip(run.reports, run.models, strict=True) if m == model),
            models=(),
        )
        for model in dict.fromkeys(run.models)
    ]


def by_device(runs: Sequence[RunInfo]) -> dict[str, list[RunInfo]]:
    """Each device model's runs, oldest first (runs with no time keep the
    order given, after the timed ones: ISO timestamps sort as text)."""
    groups: dict[str, list[RunInfo]] = {}
    for run in (part for given in runs for part in per_model(given)):
        groups.setdefault(run.device, []).append(run)
    return {
        device: sorted(group, key=lambda r: (r.timestamp == "", r.timestamp))
        for device, group in sorted(groups.items())
    }


def trends(runs: Sequence[RunInfo], threshold_pct: float) -> list[Trend]:
    """Every (device, problem, kernel) through the runs of its device."""
    out: list[Trend] = []
    for device, ordered in by_device(runs).items():
        seen: dict[tuple[str, str], list[TrendPoint]] = {}
        last: dict[tuple[str, str], tuple[CompareReport, Setup]] = {}
        for run in ordered:
            for report in run.reports:  # a partial run's whole points are judged
                for summary in report.summaries:
                    key = (report.problem.label, summary.kernel)
                    change = None
                    if key in last:
                        earlier, setup = last[key]
                        changes = compare_runs([earlier], [report], threshold_pct)
                        change = next(c for c in changes if c.kernel == summary.kernel)
                        notes = change.notes + setup_notes(setup, run.setup)
                        change = attrs.evolve(change, device=device, notes=notes)
                    point = TrendPoint(
                        run=run.label,
                        commit=run.commit,
                        timestamp=run.timestamp,
                        summary=summary,
                        change=change,
                    )
                    seen.setdefault(key, []).append(point)
                    if summary.status == "timed" and not partial_figures(report, summary):
                        last[key] = (report, run.setup)  # the next step's reference: whole figures
        out.extend(
            Trend(device=device, problem=problem, kernel=kernel, points=tuple(points))
            for (problem, kernel), points in seen.items()
        )
    return out


def latest_regressions(history: Sequence[Trend]) -> list[Trend]:
    """The trends whose newest step is a regression (what fails CI)."""
    return [
        t
        for t in history
        if t.points and t.points[-1].change is not None and t.points[-1].change.regression
    ]
