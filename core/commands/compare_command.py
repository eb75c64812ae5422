"""``compare``'s work from its request to its result, for the command line
and the Python API alike (:class:`~gemmreg.commands.requests.CompareRequest`
in, :class:`~gemmreg.commands.results.CompareResult` out): the options
refused in one line before any worker starts, the point decided (the
backend's default shape where none was asked for), refused where it cannot
fit or fewer than two of its kernels can run here, then timed (on this
host, spread over GPUs, or on a Ray cluster: the executor
:class:`Launch` chooses, :mod:`gemmreg.fanout.executors`). The run is
saved apart (:func:`save`), after the caller has shown it: a storage that
refuses the save then loses no figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
from gemmreg.commands.launching import (
    LOCAL,
    Launch,
    Progress,
    executor_for,
    killed_on_error,
    silent,
    start_ahead,
    warn_if_long,
)
from gemmreg.commands.requests import CompareRequest, check_names
from gemmreg.commands.results import CompareResult
from gemmreg.workers.tracing import trace

if TYPE_CHECKING:
    from gemmreg.timing.timing_options import TimingOptions


def compare(
    request: CompareRequest, progress: Progress = silent, launch: Launch = LOCAL
) -> CompareResult:
    """Time the request's kernels at its point; the result is not saved yet."""
    from gemmreg.contract import backend
    from gemmreg.discovery import registry
    from gemmreg.fanout import ahead_pinned
    from gemmreg.fanout.executors import CompareJob
    from gemmreg.reporting import run_folder
    from gemmreg.reporting.progress import Meter
    from gemmreg.timing import preflight
    from gemmreg.workers import devices

    check_names("compare", request.kernels, 2)
    on_ray = launch.ray is not None
    request.timing.check(launch.spell, ray=on_ray)
    names = list(request.kernels)
    ahead = start_ahead(names, request.timing, True, launch)
    with killed_on_error(ahead):
        info = backend.current()
        if launch.on_backend is not None:
            launch.on_backend(info)
        executor = executor_for(launch, info)
        devices.one_model(executor.gpus, "compare")
        ahead = ahead_pinned.unless_other_gpus(ahead, launch.devices, executor.gpus)
        problem = request.problem(info.is_gpu)
        preflight.refuse_unfit([(problem.mnk, problem.dtype)], info)
        timing = request.timing.options(info.is_gpu, fixed=on_ray)
        kernels = registry.discover().select(names)
        preflight.require_runnable(kernels, [problem], 2, "compare")
        if request.out is not None:  # held until the caller releases it
            run_folder.claim(request.out, launch.spell("out"), request.force, launch.spell("force"))
    progress(
        f"timing {', '.join(names)} at {problem.shape} {problem.number_format} {problem.layout} "
        f"on {info.kind} ({info.device_name}): {_how_many(timing)}"
    )
    estimate = warn_if_long("compare", kernels, [problem], timing, info.is_gpu, progress)
    runnable = len(kernels) - len(preflight.not_runnable(kernels, problem))
    meter = (
        Meter([1.0] * (timing.processes * runnable), "process runs", estimate_s=estimate)
        if launch.meter
        else None
    )
    line = progress if meter is None else meter.line
    trace("plugins discovered, options checked")
    job = CompareJob(
        kernels=kernels,
        problem=problem,
        timing=timing,
        info=info,
        progress=line,
        meter=meter,
        ahead=ahead,
        keep_cache=launch.keep_cache,
    )
    try:
        report, manifest = executor.compare(job)
    finally:
        if meter is not None:
            meter.close()
    if request.weight is not None:
        report = attrs.evolve(report, weight=request.weight)
    manifest.update(request.manifest)
    if launch.after is not None:
        launch.after(report, manifest, executor.gpus)
    return CompareResult(
        reports=(report,), manifest=manifest, partial=report.partial, out=request.out
    )


def save(result: CompareResult, progress: Progress = silent) -> None:
    """The run, into the folder its request claimed (none: nothing to do);
    a run cut short says why in its manifest."""
    from gemmreg.fanout import sweeping

    if result.out is None:
        return
    if result.partial:
        result.manifest["stopped"] = sweeping.INTERRUPTED_NOTE
    sweeping.save(result.out, result.manifest, result.reports, result.partial)
    progress(f"run saved to {result.out}/")


def _how_many(timing: TimingOptions) -> str:
    """The processes a comparison will run, as its first line says."""
    if timing.budget_s is None:
        return f"{timing.processes} processes"
    return f"{timing.processes} processes, more until decided within {timing.budget_s:g} s"
