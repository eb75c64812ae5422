"""Which figures of two saved runs may be judged against each other: only
those of one device model.

A change between two runs pairs each kernel's process medians on one point
(:func:`gemmreg.reporting.regression.compare_runs`); paired across two GPU
models, the interval would measure the hardware, not the commit, and a
faster card would hide a regression. So every report is given its model
(:func:`model_of`, the same rule ``report RUN1 RUN2 RUN3`` splits a history
by, :mod:`gemmreg.reporting.history`), and ``report BEFORE AFTER``
(:func:`pair_runs`) pairs only within a model: two runs with no model in
common are refused (:class:`NoSharedModel`), and where they share some
(a ``--devices`` run over two models against a run on one), the points of
the other models are listed as unpaired, each with its reason, as are the
points and plugins of a shared model that one run lacks; two runs that share
nothing to pair are refused (:class:`NothingShared`). Each change
carries the notes of :mod:`gemmreg.reporting.setup_changes` (another card,
unlike software) where the two runs' setups differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from gemmreg.reporting.regression import Change, compare_runs
from gemmreg.reporting.setup_changes import setup_notes, setup_of
from gemmreg.timing.timing_records import CompareReport

CPU_DEVICE = "cpu"
"""The device model of runs on the CPU backend, whatever the host's processor."""
UNKNOWN = "unknown"
"""The model of a report that names none (its run's manifest names none either)."""


class NoSharedModel(ValueError):
    """Two runs whose reports share no device model: nothing may be paired."""


class NothingShared(NoSharedModel):
    """Two runs of one model that share no (point, plugin): nothing was
    compared, which a regression gate must not read as a pass."""


@attrs.frozen(kw_only=True)
class Unpaired:
    """A point of one run left out of the comparison: the other run has no
    figures of its device model."""

    run: str
    """``before`` or ``after``: the run that has the point."""
    problem: str
    device: str
    reason: str


@attrs.frozen(kw_only=True)
class Pairing:
    changes: tuple[Change, ...]
    """One per (device model, problem, kernel) both runs timed; each names its model."""
    unpaired: tuple[Unpaired, ...] = ()


def model_of(manifest: Mapping[str, Any], report: CompareReport) -> str:
    """The device model ``report``'s figures were taken on: ``cpu`` for any run
    on the CPU backend, else the report's own device (a ``--devices`` or
    ``--ray`` run holds reports of several), else its run's."""
    if manifest.get("backend") == "cpu":
        return CPU_DEVICE
    return report.device_name or str(manifest.get("device_name") or "") or UNKNOWN


def models(manifest: Mapping[str, Any], reports: Sequence[CompareReport]) -> list[str]:
    """The models of a run's reports, in order of appearance."""
    return list(dict.fromkeys(model_of(manifest, r) for r in reports))


def pair_runs(
    before_manifest: Mapping[str, Any],
    before: Sequence[CompareReport],
    after_manifest: Mapping[str, Any],
    after: Sequence[CompareReport],
    threshold_pct: float,
) -> Pairing:
    """The changes of ``report BEFORE AFTER``, each within one device model.
    Raises :class:`NoSharedModel` (naming both runs' models) when both runs
    have reports and no model in common."""
    old, new = models(before_manifest, before), models(after_manifest, after)
    shared = [m for m in old if m in new]
    if old and new and not shared:
        raise NoSharedModel(
            f"report: BEFORE ran on {' and '.join(old)}, AFTER on {' and '.join(new)}: "
            "figures of two device models are never paired (report each run alone)"
        )
    changes: list[Change] = []
    setup = setup_notes(setup_of(before_manifest), setup_of(after_manifest))
    for model in shared:
        earlier = [r for r in before if model_of(before_manifest, r) == model]
        later = [r for r in after if model_of(after_manifest, r) == model]
        changes += [
            attrs.evolve(c, device=model, notes=c.notes + setup)
            for c in compare_runs(earlier, later, threshold_pct)
        ]
    unpaired = [
        *_unpaired("before", "AFTER", before_manifest, before, shared),
        *_unpaired("after", "BEFORE", after_manifest, after, shared),
        *_absent("before", "AFTER", before_manifest, before, after_manifest, after, shared),
        *_absent("after", "BEFORE", after_manifest, after, before_manifest, before, shared),
    ]
    if before and after and not changes:
        raise NothingShared(
            "report: BEFORE and AFTER share no point timed with the same plugin "
            "(another shape, dtype, layout or plugin set?): nothing to compare"
        )
    return Pairing(changes=tuple(changes), unpaired=tuple(unpaired))


def _absent(
    run: str,
    other: str,
    manifest: Mapping[str, Any],
    reports: Sequence[CompareReport],
    other_manifest: Mapping[str, Any],
    other_reports: Sequence[CompareReport],
    shared: Sequence[str],
) -> list[Unpaired]:
    """The points of a shared model that ``run`` has and the other run lacks,
    whole or in some plugin: left out of the comparison, so said (a sweep
    whose AFTER run lost a shape or a plugin must not pass a gate unseen)."""
    theirs: dict[tuple[str, str], set[str]] = {}
    for r in other_reports:
        key = (model_of(other_manifest, r), r.problem.label)
        theirs.setdefault(key, set()).update(s.kernel for s in r.summaries)
    out = []
    for report in reports:
        model = model_of(manifest, report)
        if model not in shared:
            continue
        kernels = theirs.get((model, report.problem.label))
        missing = [s.kernel for s in report.summaries if kernels is None or s.kernel not in kernels]
        if kernels is None:
            why = f"{other} did not time this point"
        elif missing:
            why = f"{other} did not time {', '.join(missing)} at this point"
        else:
            continue
        out.append(Unpaired(run=run, problem=report.problem.label, device=model, reason=why))
    return out


def _unpaired(
    run: str,
    other: str,
    manifest: Mapping[str, Any],
    reports: Sequence[CompareReport],
    shared: Sequence[str],
) -> list[Unpaired]:
    out = []
    for report in reports:
        model = model_of(manifest, report)
        if model not in shared:
            why = f"{other} has no figures on {model}: two device models are never paired"
            out.append(Unpaired(run=run, problem=report.problem.label, device=model, reason=why))
    return out
