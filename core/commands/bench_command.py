"""``bench``'s work from its request to its result, for the command line and
the Python API alike (:class:`~gemmreg.commands.requests.BenchRequest` in,
:class:`~gemmreg.commands.results.BenchResult` out): the options
refused in one line before any worker starts, every point refused where it
cannot fit and the sweep where no kernel can run, the run's folder claimed
(a new one under ``runs/`` by default), then every point timed in turn (on
this host, one pool per GPU, or on a Ray cluster: :class:`Launch`), the run
saved after each point. Where the points are timed is the executor's
choice (:mod:`gemmreg.fanout.executors`), made once.
"""

from __future__ import annotations

from pathlib import Path

import attrs
from gemmreg.commands import option_effects
from gemmreg.commands.launching import (
    LOCAL,
    Launch,
    Progress,
    executor_for,
    killed_on_error,
    point_estimates,
    silent,
    start_ahead,
    warn_if_long,
    warn_if_profiled,
)
from gemmreg.commands.request_values import Spell, check_names
from gemmreg.commands.requests import BenchRequest
from gemmreg.commands.results import BenchResult
from gemmreg.contract.options import UsageError

DEFAULT_PARENT = Path("runs")
"""Where a sweep saves its run when the request names no folder."""


def bench(
    request: BenchRequest, progress: Progress = silent, launch: Launch = LOCAL
) -> BenchResult:
    """Time the request's kernels at every point; the run is saved after each."""
    from gemmreg.contract import backend
    from gemmreg.discovery import registry
    from gemmreg.fanout import ahead_pinned
    from gemmreg.fanout.executors import SweepJob
    from gemmreg.reporting import run_folder, run_plan
    from gemmreg.reporting.progress import Meter
    from gemmreg.timing import preflight
    from gemmreg.workers import devices

    check_names("bench", request.kernels, 1)
    # On Ray too: each actor's pool adds processes.
    request.timing.check(launch.spell, pairs=len(request.kernels) > 1)
    option_effects.refuse_force_without_out(request.out, request.force, launch.spell, True)
    names = list(request.kernels)
    problems = [point.problem for point in request.points]
    _refuse_sweep_wide(request, len(problems), launch.spell)
    # On Ray each actor starts its pool on its node; with --devices, one pool per GPU.
    ahead = start_ahead(names, request.timing, False, launch)
    with killed_on_error(ahead):
        info = backend.current()
        if launch.on_backend is not None:
            launch.on_backend(info)
        request.timing.check_backend(info.is_gpu, launch.spell)
        executor = executor_for(launch, info)
        ahead = ahead_pinned.unless_other_gpus(ahead, launch.devices, executor.gpus)
        preflight.refuse_unfit(problems, info)
        timing = request.timing.options(info.is_gpu, sweep=True)
        kernels = registry.discover().select(names)
        preflight.require_runnable(kernels, problems, 1, "bench")
        out = request.out or run_folder.default_folder(DEFAULT_PARENT, "bench")
        try:  # held until the caller releases it
            run_folder.claim(out, launch.spell("out"), request.force, launch.spell("force"))
        except UsageError:
            if request.out is None:
                out.rmdir()  # the new, empty folder made for it
            raise
    if launch.on_start is not None:
        launch.on_start()
    estimate = warn_if_long("bench", kernels, problems, timing, info.is_gpu, progress)
    warn_if_profiled(info, launch.ray is not None, progress)
    models = len(devices.groups(executor.gpus)) or 1  # every point on each model
    meter = (
        Meter(
            point_estimates(kernels, problems, timing, info.is_gpu) * models,
            "points",
            prefer_work=None,  # the cost model or the points' mean: hedged until judged
            estimate_s=estimate,
            keys=[float(p.flops) for p in problems] * models,  # how the sweeps name a point
        )
        if launch.meter
        else None
    )
    line = progress if meter is None else meter.line
    weights = [point.weight for point in request.points] if request.weighted else None
    fields: dict[str, object] = dict(
        shapes=None,
        dtypes=list(dict.fromkeys(p.dtype for p in problems)),
        layouts=list(dict.fromkeys(p.layout for p in problems)),
    )
    fields.update(request.manifest)  # the manifest's fields besides the environment's
    # What it was asked to time, saved from the first point on: what an
    # interrupted run lacks is then known (bench --resume, report --parts).
    fields[run_plan.PLAN_KEY] = run_plan.recorded(names, request.points, request.weighted)
    fields[run_plan.TIMING_KEY] = request.timing.given()  # what bench --resume times the rest with
    family = _family(request, len(problems) * models)
    if family > 1:  # what bench --resume judges the rest with
        fields[run_plan.FAMILY_KEY] = family
        timing = attrs.evolve(timing, family=family)
        progress(_family_line(family))
    job = SweepJob(
        kernels=kernels,
        problems=problems,
        timing=timing,
        info=info,
        out=out,
        progress=line,
        meter=meter,
        weights=weights,
        ahead=ahead,
        fields=fields,
    )
    try:
        done = executor.sweep(job)
    except KeyboardInterrupt:  # a second Ctrl-C: the last save stands, whole
        progress(f"gemmreg: the run as last saved is in {out}/")
        raise
    return BenchResult(
        reports=done.reports,
        manifest=done.manifest,
        partial=done.partial,
        out=out,
        not_saved="" if done.not_saved is None else str(done.not_saved),
    )


def _refuse_sweep_wide(request: BenchRequest, points: int, spell: Spell) -> None:
    """``--sweep-wide`` where judging together would change nothing, in one
    line before any work: one kernel (no pair), or one point (each GPU model
    a point is timed on adds one, known later: ``points`` counts one model,
    the least there can be)."""
    if not request.sweep_wide:
        return
    if len(request.kernels) < 2:
        raise UsageError(
            f"{spell('sweep_wide')} judges pairs: one kernel makes no pair; name a baseline first"
        )
    if _family(request, points) < 2:
        raise UsageError(
            f"{spell('sweep_wide')} judges a sweep's points together: this sweep has one "
            "point, so it would change nothing; drop it"
        )


def _family(request: BenchRequest, judged: int) -> int:
    """The points whose verdicts are judged together: 1 unless the request
    is sweep-wide; then ``judged`` (every point, on each GPU model), or the
    saved sweep's own count where the request times its rest."""
    if not request.sweep_wide:
        return 1
    return judged if request.family is None else request.family


def _family_line(family: int) -> str:
    """What judging together means for this sweep's timing, said as it starts:
    each point needs a stricter interval, so ``--budget`` may add processes."""
    from gemmreg.contract import numbers
    from gemmreg.timing import stats

    each = stats.family_confidence(stats.CONFIDENCE, family)
    return (
        f"gemmreg: the sweep's {family} points are judged together: each point's pairs at "
        f"{numbers.significant(100 * each, 8)}%, so that a claim anywhere among them holds at "
        f"{numbers.level_percent(stats.CONFIDENCE)}"
    )
