"""The timing commands' work, from decided options to saved runs, without
parsing: ``gemmreg compare`` times one point (cold starts first), ``gemmreg
bench`` sweeps many, each point in turn on one pool of workers, the run
written again after every point so that an interruption keeps what finished.

The command line (:mod:`gemmreg.commands.cli_timing`) parses the options, decides
the points and prints the tables; this module prints only progress, through
the ``progress`` it is handed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs
from gemmreg.contract.backend import BackendInfo
from gemmreg.contract.batching import shown_shape
from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.fanout.jobs import CompareJob, SweepJob
from gemmreg.instruments import environment
from gemmreg.reporting import render_compare, render_points, runs
from gemmreg.reporting.progress import Meter
from gemmreg.reporting.timing_lines import Progress as Progress  # re-exported
from gemmreg.reporting.timing_lines import batch_hook, progress_hooks
from gemmreg.timing import comparing, rejudging, worker_pool
from gemmreg.timing.timing_options import DEFAULT_L2, TimingOptions
from gemmreg.timing.timing_records import HELD_WORDS, CompareReport
from gemmreg.workers import devices
from gemmreg.workers.devices import Device
from gemmreg.workers.tracing import trace

L2_WORDS = {"clean": "read, left clean", "dirty": "zeroed, left dirty"}
"""How a report's clock line says what the flush left (``--l2``)."""


def clock_description(info: BackendInfo, device_name: str = "", l2: str = DEFAULT_L2) -> str:
    """How this backend's figures are timed, as a report states it."""
    if info.is_gpu:
        return (
            f"GPU events on {device_name or info.device_name}, L2 flushed ({L2_WORDS[l2]}) "
            f"before every sample, {HELD_WORDS} (stream held); "
            "clocks, power and throttle reasons read around every slot (NVML)"
        )
    return f"perf_counter on the CPU ({info.device_name}), no L2 flush, Triton interpreted"


def time_point(
    kernels: Sequence[RegisteredKernel],
    problem: Problem,
    timing: TimingOptions,
    info: BackendInfo,
    progress: Progress,
    label: str = "",
    pool: worker_pool.Pool | None = None,
    while_starting: Callable[[], None] | None = None,
    need: int = 1,
    ahead: worker_pool.Ahead | None = None,
    device: Device | None = None,
    chosen: Sequence[Device] = (),
    meter: Meter | None = None,
    keep_cache: Path | None = None,
) -> CompareReport:
    """Time ``kernels`` on one problem, with a progress line per process and
    per cold start; ``need``: see :func:`gemmreg.timing.comparing.run_compare`.
    ``device``: the GPU ``pool`` is pinned to (:mod:`gemmreg.workers.devices`),
    recorded in the report in place of the backend's device 0. ``chosen``:
    GPUs of one model the processes spread over (``compare --devices``).
    ``meter``: each process's line counts as one of its items (``compare``).
    ``keep_cache``: see :func:`gemmreg.timing.comparing.run_compare`."""
    if len(chosen) == 1:
        device = chosen[0]
    device_name = device.name if device else (chosen[0].name if chosen else info.device_name)

    on_run, on_cold = progress_hooks(timing, progress, label, meter)
    return comparing.run_compare(
        kernels,
        problem,
        processes=timing.processes,
        seed=timing.seed,
        clock=clock_description(info, device_name, timing.l2),
        device_name=device_name,
        repeats=timing.repeats,
        warmup=timing.warmup,
        max_time_s=timing.max_time_s,
        margin=timing.margin,
        l2=timing.l2,
        device_processes=timing.device_processes,
        gpu=info.is_gpu,
        on_run=on_run,
        on_cold=on_cold,
        pool=pool,
        cold=pool is None,
        while_starting=while_starting,
        need=need,
        ahead=ahead,
        device_index=devices.pinned_index() if device is None else device.index,
        pin=devices.spread(chosen) if chosen else None,
        keep_cache=keep_cache,
        gpus=[d.index for d in chosen],
        budget_s=timing.budget_s,
        family=timing.family,
        on_batch=batch_hook(progress, label, meter),
        **({} if timing.task_timeout is None else {"task_timeout": timing.task_timeout}),
    )


def flag_shared(
    report: CompareReport, manifest: Mapping[str, object], progress: Progress
) -> CompareReport:
    """A verdict taken beside another process on the GPU says so (and a
    warning line does)."""
    note = rejudging.shared_gpu_note(manifest)
    if note is None:
        return report
    progress(f"warning: {note}")
    return rejudging.with_note(report, note)


def save(
    out: Path, manifest: dict[str, object], reports: Sequence[CompareReport], partial: bool
) -> None:
    """The run, with its tables and CSV rendered from it beside it
    (:mod:`gemmreg.reporting.runs`); :class:`~gemmreg.reporting.runs.RunNotSaved`
    when the storage refuses it."""
    runs.write_run(out, manifest, reports, partial, render_compare.run_views)


INTERRUPTED_NOTE = "interrupted (Ctrl-C, SIGTERM or SIGHUP) while a point was timed"
"""What a run stopped by a signal says of itself (``manifest["stopped"]``)."""


def note_not_saved(
    out: Path, manifest: dict[str, object], kept: Sequence[CompareReport], error: runs.RunNotSaved
) -> None:
    """Try once to say in the saved run why it ends early (a folder made
    unwritable for one file, or room freed since, can still take it); on a
    disk still full the run on disk stays the last save that succeeded."""
    if not kept:
        return
    manifest["stopped"] = f"{error}; the points after these were printed, not saved"
    with contextlib.suppress(runs.RunNotSaved):
        save(out, manifest, kept, True)


def compare(
    job: CompareJob, chosen: Sequence[Device] = ()
) -> tuple[CompareReport, dict[str, object]]:
    """``job``'s point, cold starts first, and the manifest (taken while the
    workers start). A verdict is about a pair: with fewer than two kernels
    through their cold starts, nothing is timed (the survivor alone would
    answer no question). ``chosen``: GPUs of one model, process ``i`` on
    ``chosen[i % len(chosen)]``, one process per GPU at a time (``--devices``).
    The job's ``keep_cache``: where the timed processes' caches are kept for
    a profiler run afterwards (:func:`gemmreg.timing.comparing.run_compare`)."""
    manifest: dict[str, object] = {}
    on_devices = {"devices": devices.described(chosen)} if chosen else {}

    def take_manifest() -> None:  # while the workers start
        manifest.update(environment.manifest(job.kernels, seed=job.timing.seed, **on_devices))
        trace("manifest taken")

    report = time_point(
        job.kernels,
        job.problem,
        job.timing,
        job.info,
        job.progress,
        while_starting=take_manifest,
        need=2,
        ahead=job.ahead,
        chosen=chosen,
        meter=job.meter,
        keep_cache=job.keep_cache,
    )
    report = flag_shared(report, manifest, job.progress)
    manifest["gpu_state_after"] = environment.gpu_state() if job.info.is_gpu else {}
    trace("timing done, GPU state read")
    return report, manifest


@attrs.frozen
class Sweep:
    reports: tuple[CompareReport, ...]
    partial: bool
    """Interrupted: the reports are the points that finished."""
    not_saved: runs.RunNotSaved | None = None
    """The save the storage refused, which ended the sweep; every point's
    figures were printed as it finished, and the run on disk is the last
    save that succeeded."""
    manifest: dict[str, object] = attrs.field(factory=dict)
    """The run's manifest, as last saved."""


def sweep(job: SweepJob) -> Sweep:
    """Every problem of ``job`` in turn, on one pool, the run saved to its
    ``out`` after each one (marked partial until the last); its ``fields``
    join the manifest, its ``meter`` counts the points (their work, 2MNK),
    its ``weights``, one per problem, go into each point's report
    (:attr:`CompareReport.weight`); its ``ahead``: a
    :class:`~gemmreg.timing.worker_pool.Ahead` whose pool serves the sweep."""
    kernels, problems, timing, info = job.kernels, job.problems, job.timing, job.info
    out, progress, meter, weights = job.out, job.progress, job.meter, job.weights
    ahead: worker_pool.Ahead | None = job.ahead
    reports: list[CompareReport] = []
    partial = False
    not_saved: runs.RunNotSaved | None = None
    manifest: dict[str, object] = {}
    names = ", ".join(kernel.name for kernel in kernels)
    # One pool of timing workers serves every point: their start-up is paid
    # once, and overlaps the manifest's (and, started ahead, the plugins').
    if ahead is not None:
        pool = ahead.pool
        pool.fit(timing.processes, info.is_gpu)
    else:
        pool = worker_pool.Pool(size=timing.processes, env=dict(os.environ), gpu=info.is_gpu)
        pool.start()
    try:
        manifest = environment.manifest(kernels, seed=timing.seed, **job.fields)
        for index, problem in enumerate(problems, 1):
            layout = "" if problem.layout == "rowmajor" else f" {problem.layout}"
            label = f"[{index}/{len(problems)}] {shown_shape(problem)} {problem.number_format}{layout}: "
            progress(f"{label}timing {names}")
            report = time_point(kernels, problem, timing, info, progress, label, pool)
            if weights is not None:
                report = attrs.evolve(report, weight=weights[index - 1])
            reports.append(flag_shared(report, manifest, progress))
            if meter is not None and not report.partial:
                meter.advance(float(problem.flops))
            partial = report.partial
            for line in render_points.point_lines(report, label):
                progress(line)  # before the save: a full disk loses no figure
            manifest["gpu_state_after"] = environment.gpu_state() if info.is_gpu else {}
            if partial:
                manifest["stopped"] = INTERRUPTED_NOTE
            try:
                save(out, manifest, reports, partial or index < len(problems))
            except runs.RunNotSaved as error:
                not_saved = error
                partial = True
                note_not_saved(out, manifest, reports[:-1], error)
                break
            if partial:
                break
    finally:
        if meter is not None:
            meter.close()
        pool.close()
        if ahead is not None:
            ahead.close()  # its caches folder
    return Sweep(reports=tuple(reports), partial=partial, not_saved=not_saved, manifest=manifest)
