"""The points a sweep was asked to time, kept in its saved run (``manifest.planned``).

Why: a run's reports say which points were timed, never which were not. A
sweep cut short (a device lease, a CI limit, Ctrl-C) left points unstarted,
and nothing in its run named them: neither ``bench --resume`` (which times
what a run lacks) nor ``report --parts`` (which must say whether its parts
make the whole sweep) could tell a finished sweep from half of one. ``bench``
therefore records its plan before the first point: the plugins, in the
order given (the pairs depend on it), and each point's label, its problem
record (as the reports hold theirs: enough to time it again) and its weight.

A plan is input like the rest of ``run.json``: each value is checked against
these records (:mod:`gemmreg.reporting.run_schema`), and a plan that no
``bench`` could have saved (a label that is not its problem's, a point or a
plugin twice, a report of a point outside the plan) is refused in one line
(:func:`refusal`). Runs saved before plans existed have none, and read as
they always did.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import attrs
from gemmreg.contract.records import Problem
from gemmreg.contract.serialization import from_jsonable, to_jsonable
from gemmreg.reporting import run_schema
from gemmreg.timing.points import Point
from gemmreg.timing.shape_rows import MAX_WEIGHT
from gemmreg.timing.timing_records import CompareReport

PLAN_KEY = "planned"
"""The manifest's field holding the plan."""
TIMING_KEY = "timing_asked"
"""The manifest's field holding the timing options the sweep was given
(``--processes 5``: ``{"processes": 5}``; those left to their defaults are
absent): ``bench --resume`` times the rest as the sweep was asked."""
FAMILY_KEY = "judged_together"
"""The manifest's field holding the points a sweep judged together
(``bench --sweep-wide``), absent where each point was judged on its own:
``bench --resume`` judges the rest of the sweep with them."""
SHOWN_LABELS = 20
"""Points named on a stderr line before the rest are counted: a sweep may
plan 1000."""


def timing_text(timing: Mapping[str, object]) -> str:
    """A run's :data:`TIMING_KEY` as the command line wrote it
    (``--processes 5 --repeats 3``), or ``defaults`` where it gave none."""
    shown = " ".join(f"--{name.replace('_', '-')} {value}" for name, value in timing.items())
    return shown or "defaults"


@attrs.frozen(kw_only=True)
class PlannedPoint:
    """One point a sweep was asked to time."""

    label: str
    """The problem's label (``fp16-rowmajor-256x256x256``): how reports name a point."""
    problem: Problem
    weight: float | None = None
    """The point's weight from a shapes file; None where the sweep had none."""


@attrs.frozen(kw_only=True)
class Plan:
    """What a sweep was asked to time: these plugins at these points, in order."""

    plugins: tuple[str, ...]
    points: tuple[PlannedPoint, ...]

    @property
    def labels(self) -> list[str]:
        return [p.label for p in self.points]

    @property
    def weighted(self) -> bool:
        """The sweep's points carried weights (a shapes file gave them)."""
        return any(p.weight is not None for p in self.points)


def recorded(plugins: Sequence[str], points: Sequence[Point], weighted: bool) -> dict[str, object]:
    """The plan of a sweep of ``plugins`` over ``points``, as the manifest keeps it."""
    plan = Plan(
        plugins=tuple(plugins),
        points=tuple(
            PlannedPoint(
                label=p.problem.label, problem=p.problem, weight=p.weight if weighted else None
            )
            for p in points
        ),
    )
    return to_jsonable(plan)


def plan_of(manifest: Mapping[str, object]) -> Plan | None:
    """The plan a run's manifest records, or None (a run saved before plans,
    a ``compare`` run). Raises :class:`~gemmreg.reporting.run_schema.SchemaError`
    (a ``ValueError``, one line naming where) on a plan no ``bench`` could save."""
    data = manifest.get(PLAN_KEY)
    if data is None:
        return None
    where = f"manifest.{PLAN_KEY}"
    checked = run_schema.check_record(Plan, data, where)
    points = checked["points"]
    assert isinstance(points, list)  # check_record has seen to it
    for index, point in enumerate(points):
        try:  # the records' own validators: a size of 0, an fp8 batch
            from_jsonable(Problem, point["problem"])
        except Exception as error:
            raise run_schema.SchemaError(
                f"{where}.points[{index}].problem: {type(error).__name__}: {error}"
            ) from None
    plan = from_jsonable(Plan, checked)
    _check(plan, where)
    return plan


def _check(plan: Plan, where: str) -> None:
    if not plan.plugins or not plan.points:
        raise run_schema.SchemaError(f"{where}: a plan names at least one plugin and one point")
    if len(set(plan.plugins)) != len(plan.plugins):
        raise run_schema.SchemaError(f"{where}.plugins: a plugin is named twice")
    seen: set[str] = set()
    for index, point in enumerate(plan.points):
        at = f"{where}.points[{index}]"
        if point.label != point.problem.label:
            raise run_schema.SchemaError(
                f"{at}: label {point.label!r} is not its problem's ({point.problem.label})"
            )
        if point.label in seen:
            raise run_schema.SchemaError(f"{at}: point {point.label} is planned twice")
        seen.add(point.label)
        weight = point.weight
        if weight is not None and not (math.isfinite(weight) and 0 < weight <= MAX_WEIGHT):
            raise run_schema.SchemaError(
                f"{at}.weight: must be above 0 up to {MAX_WEIGHT:g}, got {weight!r}"
            )


def refusal(plan: Plan | None, reports: Sequence[CompareReport]) -> str | None:
    """Why ``reports`` cannot be a run of ``plan``, or None: a sweep times
    only the points it planned."""
    if plan is None:
        return None
    planned = set(plan.labels)
    for index, report in enumerate(reports):
        if report.problem.label not in planned:
            return (
                f"reports[{index}] ({report.problem.label}): a point outside the run's "
                f"{PLAN_KEY} points"
            )
    return None


def whole(reports: Iterable[CompareReport]) -> set[str]:
    """The labels of the points timed whole: every report of the label is
    whole (a sweep over several device models times a point on each)."""
    unfinished = {r.problem.label for r in reports if r.partial}
    return {r.problem.label for r in reports if not r.partial} - unfinished


def lacking(plan: Plan, reports: Sequence[CompareReport]) -> list[PlannedPoint]:
    """The planned points ``reports`` lack whole (never started, or left
    partial), in the plan's order."""
    done = whole(reports)
    return [p for p in plan.points if p.label not in done]


def listed(labels: Sequence[str]) -> str:
    """``labels`` joined for a line, the first :data:`SHOWN_LABELS` of them."""
    shown = ", ".join(labels[:SHOWN_LABELS])
    more = len(labels) - SHOWN_LABELS
    return shown if more <= 0 else f"{shown} and {more} more"


def lacking_line(manifest: Mapping[str, object], reports: Sequence[CompareReport], run: str) -> str:
    """For a partial run's stderr: the planned points it lacks whole and the
    command that times them; '' when its manifest has no plan or it lacks none."""
    plan = plan_of(manifest)
    left = [] if plan is None else lacking(plan, reports)
    if plan is None or not left:
        return ""
    return (
        f"gemmreg: {len(left)} of its {len(plan.points)} planned points are not timed "
        f"whole: {listed([p.label for p in left])}; "
        f"bench {' '.join(plan.plugins)} --resume {run} --out NEW times them"
    )
