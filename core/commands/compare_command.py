"""``compare``'s work from its request to its result, for the command line
and the Python API alike (:class:`~gemmreg.commands.requests.CompareRequest`
in, :class:`~gemmreg.commands.results.CompareResult` out): the options
refused in one line before any worker starts, the points decided (one
shape, the backend's default where none was asked for, at each dtype),
refused where one cannot fit or fewer than two of its kernels can run it
here, then each timed in turn (on this host, spread over GPUs, or on a Ray
cluster: the executor :class:`Launch` chooses,
:mod:`gemmreg.fanout.executors`). The run is saved apart (:func:`save`),
after the caller has shown it: a storage that refuses the save then loses
no figure.

Each dtype is a comparison of its own, as one dtype's always was (cold
starts first, then its processes, each process a fresh one), not a point
of ``bench``'s sweep, which times every point on one warm pool and saves
after each: so the loop over dtypes is here, and the sweep's is not reused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
from gemmreg.commands import option_effects
from gemmreg.commands.launching import (
    LOCAL,
    Launch,
    Progress,
    executor_for,
    killed_on_error,
    silent,
    start_ahead,
    warn_if_long,
    warn_if_profiled,
)
from gemmreg.commands.request_values import check_names
from gemmreg.commands.requests import CompareRequest
from gemmreg.commands.results import CompareResult
from gemmreg.contract.batching import shown_shape
from gemmreg.workers.tracing import trace

if TYPE_CHECKING:
    from gemmreg.contract.backend import BackendInfo
    from gemmreg.contract.records import Problem
    from gemmreg.timing.timing_options import TimingOptions
    from gemmreg.timing.timing_records import CompareReport


def compare(
    request: CompareRequest, progress: Progress = silent, launch: Launch = LOCAL
) -> CompareResult:
    """Time the request's kernels at its shape, each dtype in turn; the
    result is not saved yet."""
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
    option_effects.refuse_force_without_out(request.out, request.force, launch.spell, False)
    names = list(request.kernels)
    ahead = start_ahead(names, request.timing, True, launch)
    with killed_on_error(ahead):
        info = backend.current()
        if launch.on_backend is not None:
            launch.on_backend(info)
        request.timing.check_backend(info.is_gpu, launch.spell)
        executor = executor_for(launch, info)
        devices.one_model(executor.gpus, "compare")
        ahead = ahead_pinned.unless_other_gpus(ahead, launch.devices, executor.gpus)
        problems = request.problems(info.is_gpu)
        preflight.refuse_unfit(problems, info)
        timing = request.timing.options(info.is_gpu, fixed=on_ray)
        kernels = registry.discover().select(names)
        for problem in problems:  # every dtype's pair, as one dtype's always was
            preflight.require_runnable(kernels, [problem], 2, "compare")
        if request.out is not None:  # held until the caller releases it
            run_folder.claim(request.out, launch.spell("out"), request.force, launch.spell("force"))
    progress(_timing_line(names, problems, 0, timing, info))
    estimate = warn_if_long("compare", kernels, problems, timing, info.is_gpu, progress)
    warn_if_profiled(info, on_ray, progress)
    runnable = sum(len(kernels) - len(preflight.not_runnable(kernels, p)) for p in problems)
    meter = (
        Meter([1.0] * (timing.processes * runnable), "process runs", estimate_s=estimate)
        if launch.meter
        else None
    )
    line = progress if meter is None else meter.line
    trace("plugins discovered, options checked")
    reports: list[CompareReport] = []
    manifests: list[dict[str, object]] = []
    from gemmreg.fanout.executors import Ray

    connection = contextlib.ExitStack()  # on Ray, one connection for every dtype
    try:
        if isinstance(executor, Ray):
            connection.enter_context(executor.held())
        for index, problem in enumerate(problems):
            if index:
                progress(_timing_line(names, problems, index, timing, info))
            job = CompareJob(
                kernels=kernels,
                problem=problem,
                timing=timing,
                info=info,
                progress=line,
                meter=meter,
                ahead=None if index else ahead,  # the first comparison's cold starts
                keep_cache=launch.keep_cache,
            )
            report, manifest = executor.compare(job)
            if request.weights is not None:
                report = attrs.evolve(report, weight=request.weights[index])
            reports.append(report)
            manifests.append(manifest)
            if report.partial:  # interrupted: the dtypes after it are not timed
                break
    finally:
        connection.close()
        if meter is not None:
            meter.close()
    manifest = merged(manifests)
    manifest.update(request.manifest)
    if launch.after is not None:
        launch.after(reports, manifest, executor.gpus)
    return CompareResult(
        reports=tuple(reports), manifest=manifest, partial=reports[-1].partial, out=request.out
    )


def merged(manifests: Sequence[dict[str, object]]) -> dict[str, object]:
    """One run's manifest from its comparisons' (a dtype each): the first's
    environment, the GPU state after the last, and every Ray node that ran
    a task for any of them."""
    manifest = dict(manifests[0])
    for later in manifests[1:]:
        if "gpu_state_after" in later:
            manifest["gpu_state_after"] = later["gpu_state_after"]
        if "ray_nodes" in later:
            nodes = [*_listed(manifest.get("ray_nodes")), *_listed(later["ray_nodes"])]
            manifest["ray_nodes"] = [n for i, n in enumerate(nodes) if n not in nodes[:i]]
    return manifest


def _listed(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


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


def _timing_line(
    names: Sequence[str],
    problems: Sequence[Problem],
    index: int,
    timing: TimingOptions,
    info: BackendInfo,
) -> str:
    """What a comparison's first line says: the kernels, the point (counted
    where there are several dtypes), the device and the processes."""
    p = problems[index]
    counted = f"[{index + 1}/{len(problems)}] " if len(problems) > 1 else ""
    processes = f"{timing.processes} processes"
    if timing.budget_s is not None:
        processes += f", more until decided within {timing.budget_s:g} s"
    return (
        f"{counted}timing {', '.join(names)} at {shown_shape(p)} {p.number_format} {p.layout} "
        f"on {info.kind} ({info.device_name}): {processes}"
    )
