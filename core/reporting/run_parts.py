"""Saved runs read as the parts of one sweep (``gemmreg report --parts RUN...``).

Why: a sweep too long for one sitting (a time-limited CI job, a device lease,
an interrupted run finished by a second command over the points left) is
saved as several runs. Its summary (the verdict table and the weighted
geometric mean over every point) belongs to the sweep, not to each part: a
mean over half the points says something else. The parts are joined only
where that is sound: every point in one part only, and every part timed on
the same device model (a speedup on one GPU model does not average with one
on another).

One exception to "one part only": a point an interrupted part left unfinished
(its record ``partial``: its verdict, if any, is marked PARTIAL) and another
part timed whole. The unfinished timing was cut short of the protocol, so
there is no choice to make: the whole one stands and the join says so. Two
whole timings of one point are still refused: taking the one a reader likes
better would be choosing a verdict, not joining a sweep.

Whether the joined sweep is whole comes from what each part was asked to
time (its plan: :mod:`gemmreg.reporting.run_plan`). Where every part has a
plan, the join is whole when every point any part planned is timed whole in
some part (an interrupted run finished by ``bench --resume``), and partial
otherwise, naming the points still missing. A part saved before plans has
none: it says what it timed, never what it missed, so an interrupted one
leaves the join partial, as every interrupted part once did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gemmreg.contract import numbers
from gemmreg.reporting import run_plan
from gemmreg.reporting.device_pairing import model_of
from gemmreg.reporting.runs import RunError
from gemmreg.timing.timing_records import CompareReport

LoadedRun = tuple[Mapping[str, Any], list[CompareReport], bool]
"""A run as :func:`gemmreg.reporting.runs.load_run` returns it."""


def _commit(manifest: Mapping[str, Any]) -> str:
    git = manifest.get("git")
    return str(git.get("commit") or "unknown") if isinstance(git, Mapping) else "unknown"


def join_parts(
    names: Sequence[str], loaded: Sequence[LoadedRun]
) -> tuple[dict[str, Any], list[CompareReport], bool]:
    """One run of every part's points, in the order given; the first part's
    manifest, with ``parts`` naming each part, the commit it ran and the
    points it gave, and ``superseded`` naming each unfinished point that
    another part timed whole. Raises :class:`RunError` (one line) on a point
    timed whole in two parts (or left unfinished in two, or timed with other
    plugins in another part) or parts of two device models."""
    owner: dict[str, tuple[str, int]] = {}
    model_owner: dict[str, str] = {}
    reports: list[CompareReport] = []
    dropped: set[int] = set()  # the unfinished points another part timed whole
    superseded: list[dict[str, str]] = []
    for name, (manifest, part, _) in zip(names, loaded, strict=True):
        for report in part:
            _same_model(model_owner, model_of(manifest, report), name)
            key = report.problem.label
            if key not in owner:
                owner[key] = (name, len(reports))
                reports.append(report)
                continue
            first, at = owner[key]
            earlier = reports[at]
            kernels = _kernels(report)
            if _kernels(earlier) != kernels:
                raise RunError(
                    f"point {key} is timed in both {first} ({', '.join(_kernels(earlier))}) "
                    f"and {name} ({', '.join(kernels)}): each point belongs to one part, "
                    "or a pair in both would be judged, and counted in the mean, twice"
                )
            if earlier.partial == report.partial:
                how = "left unfinished" if report.partial else "timed whole"
                raise RunError(
                    f"point {key} ({', '.join(kernels)}) is {how} in both "
                    f"{first} and {name}: each point belongs to one part"
                )
            unfinished, whole = (first, name) if earlier.partial else (name, first)
            superseded.append(
                {"point": report.problem.label, "unfinished": unfinished, "whole": whole}
            )
            if earlier.partial:
                dropped.add(at)
                owner[key] = (name, len(reports))
                reports.append(report)
    kept = [r for i, r in enumerate(reports) if i not in dropped]
    given = {name: 0 for name in names}
    for name, _ in owner.values():
        given[name] += 1
    manifest = dict(loaded[0][0])
    manifest["parts"] = [
        {"run": name, "commit": _commit(m), "points": given[name]}
        | (
            {"timing": m[run_plan.TIMING_KEY]}
            if isinstance(m.get(run_plan.TIMING_KEY), Mapping)
            else {}
        )
        for name, (m, _, _) in zip(names, loaded, strict=True)
    ]
    manifest.pop(run_plan.TIMING_KEY, None)  # the first part's: each part's is in parts
    if superseded:
        manifest["superseded"] = superseded
    missing, unplanned = _missing(names, loaded, kept)
    partial = bool(missing) or bool(unplanned) or any(r.partial for r in kept)
    manifest.pop(run_plan.PLAN_KEY, None)  # the first part's: the join's are each part's
    if missing:
        manifest["missing"] = missing
    if not partial:
        manifest.pop("stopped", None)  # a part stopped; the sweep did not
    return manifest, kept, partial


def _missing(
    names: Sequence[str], loaded: Sequence[LoadedRun], kept: Sequence[CompareReport]
) -> tuple[list[dict[str, str]], list[str]]:
    """The planned points no part timed whole, each with the last part that
    planned it (the one to resume: an earlier one's plan holds points a later
    part has timed since), and the interrupted parts without a plan (what
    they missed is unknown)."""
    missing: dict[str, str] = {}
    unplanned = []
    for name, (manifest, _, partial) in zip(names, loaded, strict=True):
        plan = run_plan.plan_of(manifest)  # checked as the run was read
        if plan is None:
            if partial:
                unplanned.append(name)
            continue
        for point in run_plan.lacking(plan, kept):  # lacking in every part, not just this one
            missing[point.label] = name
    return [{"point": p, "planned_by": run} for p, run in missing.items()], unplanned


def _kernels(report: CompareReport) -> tuple[str, ...]:
    return tuple(sorted(s.kernel for s in report.summaries))


def _same_model(model_owner: dict[str, str], model: str, name: str) -> None:
    """Record that part ``name`` ran on ``model``; raise :class:`RunError` once
    two models are seen."""
    model_owner.setdefault(model, name)
    if len(model_owner) > 1:
        (first, where), (other, there) = list(model_owner.items())[:2]
        raise RunError(
            f"{where} ran on {first} and {there} on {other}: parts of one sweep share "
            "a device model (report them apart)"
        )


def parts_line(manifest: Mapping[str, Any]) -> str:
    """``N runs read as one sweep: A (commit, P points), B (...)``, and each
    unfinished point taken whole from another part, for stderr."""
    parts = manifest.get("parts") or []
    described = ", ".join(
        f"{p['run']} ({p['commit'][:12]}, {numbers.counted(p['points'], 'point')})" for p in parts
    )
    line = f"{len(parts)} runs read as one sweep: {described}"
    for s in manifest.get("superseded") or []:
        line += f"; {s['point']}: unfinished in {s['unfinished']}, taken whole from {s['whole']}"
    recorded = [p for p in parts if "timing" in p]  # parts saved before it was kept: unknown
    if len({repr(sorted(p["timing"].items())) for p in recorded}) > 1:
        line += "; timed with other options: " + ", ".join(
            f"{p['run']} ({run_plan.timing_text(p['timing'])})" for p in recorded
        )
    return line


def missing_line(manifest: Mapping[str, Any]) -> str | None:
    """The planned points no part timed whole, for stderr beside
    :func:`parts_line`; None when there are none."""
    missing = manifest.get("missing") or []
    if not missing:
        return None
    by_part: dict[str, list[str]] = {}
    for m in missing:
        by_part.setdefault(m["planned_by"], []).append(m["point"])
    named = "; ".join(
        f"{run_plan.listed(points)} (planned by {run})" for run, points in by_part.items()
    )
    count = f"{len(missing)} planned point{'' if len(missing) == 1 else 's'}"
    return (
        f"gemmreg: the sweep is partial: {count} timed whole in no part: {named}; "
        "bench --resume PART times what it lacks"
    )
