"""Saved runs read as the parts of one sweep (``gemmreg report --parts RUN...``).

Why: a sweep too long for one sitting (a time-limited CI job, a device lease,
an interrupted run finished by a second command over the points left) is
saved as several runs. Its summary (the verdict table and the weighted
geometric mean over every point) belongs to the sweep, not to each part: a
mean over half the points says something else. The parts are joined only
where that is sound: every point in one part only, and every part timed on
the same device model (a speedup on one GPU model does not average with one
on another).
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
    manifest, with ``parts`` naming each part and the commit it ran. Raises
    :class:`RunError` (one line) on a point in two parts or parts of two
    device models."""
    owner: dict[tuple[str, tuple[str, ...]], str] = {}
    model_owner: dict[str, str] = {}
    reports: list[CompareReport] = []
    for name, (manifest, part, _) in zip(names, loaded, strict=True):
        for report in part:
            model = model_of(manifest, report)
            model_owner.setdefault(model, name)
            if len(model_owner) > 1:
                (first, where), (other, there) = list(model_owner.items())[:2]
                raise RunError(
                    f"{where} ran on {first} and {there} on {other}: parts of one sweep share "
                    "a device model (report them apart)"
                )
            key = (report.problem.label, tuple(sorted(s.kernel for s in report.summaries)))
            if key in owner:
                raise RunError(
                    f"point {report.problem.label} ({', '.join(key[1])}) is in both {owner[key]} "
                    f"and {name}: each point belongs to one part"
                )
            owner[key] = name
            reports.append(report)
    manifest = dict(loaded[0][0])
    manifest["parts"] = [
        {"run": name, "commit": _commit(m), "points": len(part)}
        for name, (m, part, _) in zip(names, loaded, strict=True)
    ]
    return manifest, reports, any(partial for _, _, partial in loaded)


def parts_line(manifest: Mapping[str, Any]) -> str:
    """``N parts: A (commit, P points), B (...)``, for stderr."""
    parts = manifest.get("parts") or []
    described = ", ".join(f"{p['run']} ({p['commit'][:12]}, {p['points']} points)" for p in parts)
    return f"{len(parts)} runs read as one sweep: {described}"
