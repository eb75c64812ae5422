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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
        for name, (m, _, _) in zip(names, loaded, strict=True)
    ]
    if superseded:
        manifest["superseded"] = superseded
    return manifest, kept, any(partial for _, _, partial in loaded)


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
    described = ", ".join(f"{p['run']} ({p['commit'][:12]}, {p['points']} points)" for p in parts)
    line = f"{len(parts)} runs read as one sweep: {described}"
    for s in manifest.get("superseded") or []:
        line += f"; {s['point']}: unfinished in {s['unfinished']}, taken whole from {s['whole']}"
    return line
