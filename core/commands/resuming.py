"""A saved sweep finished: the points RUN planned and lacks whole, as a
request to time them as a run of their own (``gemmreg bench PLUGINS --resume
RUN``, :mod:`gemmreg.commands.cli_resume`; ``gemmreg.resume(RUN)``).

Why: a sweep too long for one sitting (a device lease, a CI limit, Ctrl-C)
is saved partial, and finishing it by hand meant working out which points
were missing and writing them out as ``--shape`` again, where a slip (a
point forgotten, one timed twice) made parts that ``report --parts`` could
not join, or joined as less than the sweep. RUN's plan
(:mod:`gemmreg.reporting.run_plan`) says what it was asked to time; what it
lacks whole (never started, or left partial) is timed, with RUN's plugins,
in the plan's order and with its weights, and saved as a run of its own.
RUN is never written: ``report --parts RUN NEW`` joins the two, and is
whole when every planned point is.

Everything refused is refused before any work, in one line: RUN not a saved
bench run (none there, unreadable, or saved without a plan), a RUN with
nothing left, plugins other than RUN's, and an ``out`` naming RUN itself
(``force`` would remove the run being finished).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
from gemmreg.commands import keywords
from gemmreg.commands.keywords import PathLike
from gemmreg.commands.requests import BenchRequest, TimingAsked
from gemmreg.contract.options import UsageError
from gemmreg.reporting import run_plan, runs
from gemmreg.timing.points import Point
from gemmreg.timing.timing_records import CompareReport


def resume_request(
    resume: Path,
    names: Sequence[str] | None,
    out: Path | None,
    force: bool,
    asked: TimingAsked,
    sweep_wide: bool = False,
) -> tuple[BenchRequest, list[str]]:
    """The request that times what the run at ``resume`` lacks whole, and the
    lines saying what it times and what the run has (said once the work
    starts). ``names``: the plugins asked for, which must be the run's, in
    its order (None: the run's); ``asked``: timing options given, else the
    run's own. The rest is judged as the run judged its points: together
    with the run's whole family where it was sweep-wide (``sweep_wide``
    may say so again), each on its own where it was not (``sweep_wide``
    refused: the parts would be judged at two levels)."""
    run = str(resume)
    if out is not None and _same_folder(out, resume):
        raise UsageError(
            f"--out {str(out)!r} is the run being resumed: its missing points are saved "
            f"as a run of their own (then report --parts {run} OUT)"
        )
    try:
        manifest, reports, _ = runs.load_run(resume)
        plan = run_plan.plan_of(manifest)
    except (runs.RunError, ValueError) as error:
        raise UsageError(f"--resume: {error}") from None
    if plan is None:
        raise UsageError(
            f"--resume {run}: the run records no planned points (a compare run, or a bench "
            "run saved before gemmreg recorded them): what it lacks is unknown"
        )
    if names is not None and tuple(names) != plan.plugins:
        raise UsageError(
            f"--resume {run}: it timed {', '.join(plan.plugins)}; the plugins named are "
            f"{', '.join(names)}: resume with the same plugins, in the same order"
        )
    lacking = run_plan.lacking(plan, reports)
    if not lacking:
        raise UsageError(
            f"--resume {run}: nothing left: every one of its planned points "
            f"({len(plan.points)}) is timed whole"
        )
    timing, inherited = _timing(asked, manifest, run)
    family, judged = _family(manifest, run, sweep_wide)
    request = BenchRequest(
        kernels=plan.plugins,
        points=tuple(Point(p.problem, 1.0 if p.weight is None else p.weight) for p in lacking),
        timing=timing,
        out=out,
        force=force,
        weighted=plan.weighted,
        manifest=_fields(manifest, run),
        sweep_wide=family is not None,
        family=family,
    )
    return request, _lines(run, lacking, reports, plan) + inherited + judged


def called(
    run: PathLike,
    kernels: Sequence[str] | None,
    asked: TimingAsked,
    out: PathLike | None,
    force: bool,
    sweep_wide: bool = False,
) -> tuple[BenchRequest, list[str]]:
    """:func:`resume_request` for ``gemmreg.resume``'s arguments, its
    manifest recording the call as the command line's records the command."""
    folder = keywords.folder(run, "run")
    assert folder is not None
    names = None if kernels is None else keywords.names("resume", kernels)
    request, lines = resume_request(
        folder, names, keywords.folder(out, "out"), force, asked, sweep_wide
    )
    given = {name: value for name, value in attrs.asdict(asked).items() if value is not None}
    call = keywords.call(
        "resume", str(run), kernels=kernels, **given, sweep_wide=sweep_wide, out=out, force=force
    )
    return attrs.evolve(request, manifest={**request.manifest, "command": call}), lines


def _timing(
    asked: TimingAsked, manifest: Mapping[str, object], run: str
) -> tuple[TimingAsked, list[str]]:
    """The timing options given; with none given, those RUN was asked with
    (its ``timing_asked``), so that the rest of the sweep is timed as its
    start was: a line says which. Any option given replaces RUN's whole set
    (``--budget`` beside RUN's ``--processes`` would be refused)."""
    recorded = manifest.get(run_plan.TIMING_KEY)
    if asked.given() or not recorded:
        return asked, []
    names = {field.name for field in attrs.fields(TimingAsked)}
    if not isinstance(recorded, Mapping) or not all(
        name in names and isinstance(value, int | float | str) and not isinstance(value, bool)
        for name, value in recorded.items()
    ):
        raise UsageError(f"--resume {run}: manifest.{run_plan.TIMING_KEY} is not timing options")
    line = f"gemmreg: --resume {run}: timing as it was asked: {run_plan.timing_text(recorded)}"
    return TimingAsked(**recorded), [line]


def _family(
    manifest: Mapping[str, object], run: str, sweep_wide: bool
) -> tuple[int | None, list[str]]:
    """The points RUN judged together (``bench --sweep-wide``), which judge
    its rest too, and the line saying so; None where RUN judged each point
    on its own, where ``sweep_wide`` is refused."""
    recorded = manifest.get(run_plan.FAMILY_KEY)
    if recorded is None:
        if sweep_wide:
            raise UsageError(
                f"--resume {run}: its points were judged each on its own, and its rest is "
                f"judged as they were: drop --sweep-wide (report --parts {run} OUT "
                "--sweep-wide judges them all together)"
            )
        return None, []
    if not isinstance(recorded, int) or isinstance(recorded, bool) or recorded < 2:
        raise UsageError(f"--resume {run}: manifest.{run_plan.FAMILY_KEY} is not a count of points")
    line = (
        f"gemmreg: --resume {run}: judged as it was, together with its {recorded} points "
        "(--sweep-wide)"
    )
    return recorded, [line]


def _fields(manifest: Mapping[str, object], run: str) -> dict[str, object]:
    """How the points were asked for: from RUN's plan (and its shapes file,
    where its weights came from)."""
    fields: dict[str, object] = {"shapes": None, "resumed_from": run}
    if "shapes_file" in manifest:
        fields["shapes_file"] = manifest["shapes_file"]
    return fields


def _lines(
    run: str,
    lacking: Sequence[run_plan.PlannedPoint],
    reports: Sequence[CompareReport],
    plan: run_plan.Plan,
) -> list[str]:
    unfinished = {r.problem.label for r in reports if r.partial}
    timed = [p.label + (" (left partial)" if p.label in unfinished else "") for p in lacking]
    done = run_plan.whole(reports)
    has = [label for label in plan.labels if label in done]
    lines = [
        f"gemmreg: --resume {run}: timing {len(timed)} of its {len(plan.points)} planned "
        f"points, those it lacks whole: {run_plan.listed(timed)}"
    ]
    if has:
        lines.append(f"gemmreg: --resume {run}: it has {_count(has)} whole: {run_plan.listed(has)}")
    else:
        lines.append(f"gemmreg: --resume {run}: it has no point whole")
    return lines


def _count(items: Sequence[str]) -> str:
    return f"{len(items)} point{'' if len(items) == 1 else 's'}"


def _same_folder(out: Path, run: Path) -> bool:
    try:
        return out.resolve() == run.resolve()
    except (OSError, RuntimeError):  # a loop: the claim or the read names it
        return False
