"""``gemmreg compare`` and ``bench``: the timing commands (``report`` reads
their saved runs: :mod:`gemmreg.interface.cli_report`). Here the options are parsed
and checked and the points decided; the timing and the saving are
:mod:`gemmreg.orchestrating.sweeping`'s, the tables :mod:`gemmreg.rendering.render_compare`'s."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from gemmreg.deciding.options import UsageError
from gemmreg.interface import cli_device, cli_points, cli_profiler, cli_timing_setup
from gemmreg.interface.cli_common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NOT_SAVED,
    EXIT_OK,
    _check_names,
    _devices,
    _dtypes,
    _error,
    _progress,
)
from gemmreg.running import temp_folders
from gemmreg.running.tracing import trace


def cmd_compare(args: argparse.Namespace) -> int:
    from gemmreg.contract import backend
    from gemmreg.contract.records import Problem
    from gemmreg.deciding import preflight, timing_options
    from gemmreg.discovery import registry
    from gemmreg.orchestrating import sweeping
    from gemmreg.orchestrating.progress import Meter
    from gemmreg.rendering import render_compare
    from gemmreg.running import ahead_pinned
    from gemmreg.storage import run_folder

    _check_names("compare", args.names, 2)
    given = cli_points.compare_point(args, None)
    profilers = cli_profiler.chosen(args)
    ray_address = cli_device.ray_address(args)
    cli_profiler.refuse_with_ray(ray_address, profilers)
    cli_timing_setup.one_count(args, ray_address is not None)
    several = cli_device.several(args)
    ahead = (
        None
        if ray_address is not None
        else cli_timing_setup.start_ahead(args, cold=True, several=several)
    )
    with cli_timing_setup.killed_on_error(ahead):
        info = backend.current()
        cli_device.require_gpu(args, info)
        chosen = _devices(several, info)
        if chosen is not None:
            from gemmreg.running.devices import one_model

            one_model(chosen, "compare")
        ahead = ahead_pinned.unless_other_gpus(ahead, several, chosen)
        cli_profiler.refuse_on(info.kind, profilers)
        if given is None:
            m, n, k = timing_options.default_shape(info.is_gpu)
            dtype, layout = _dtypes(args.dtype)[0], cli_points.layouts(args.layout)[0]
            problem = Problem(m=m, n=n, k=k, dtype=dtype, layout=layout)
        else:
            problem = given.problem
        preflight.refuse_unfit([(problem.mnk, problem.dtype)], info)
        timing = cli_timing_setup.timing_setup(args, info.is_gpu, fixed=ray_address is not None)
        kernels = registry.discover().select(args.names)
        preflight.require_runnable(kernels, [problem], 2, "compare")
        if args.out is not None:  # held until the command ends (cli.main releases it)
            run_folder.claim(args.out, force=args.force)
    _progress(
        f"timing {', '.join(args.names)} at {problem.shape} {problem.dtype} {problem.layout} "
        f"on {info.kind} ({info.device_name}): {_how_many(timing)}"
    )
    estimate = cli_points.warn_if_long("compare", kernels, [problem], timing, info.is_gpu)
    runnable = len(kernels) - len(preflight.not_runnable(kernels, problem))
    meter = Meter([1.0] * (timing.processes * runnable), "process runs", estimate_s=estimate)
    trace("plugins discovered, options checked")
    kept = temp_folders.temporary_folder("profiled-caches") if profilers else None
    try:
        if ray_address is not None:
            from gemmreg.orchestrating import ray_compare

            report, manifest = ray_compare.compare_on_ray(
                kernels, problem, timing, info, meter.line, ray_address, meter
            )
        else:
            report, manifest = sweeping.compare(
                kernels,
                problem,
                timing,
                info,
                meter.line,
                ahead,
                meter,
                chosen or (),
                keep_cache=Path(kept.name) if kept else None,
            )
    finally:
        meter.close()
    if given is not None and args.shapes is not None:
        report = attrs.evolve(report, weight=given.weight)
        manifest["shapes_file"] = str(args.shapes)
    if kept is not None:
        with kept:
            env = cli_profiler.worker_env(Path(kept.name), chosen or ())
            cli_profiler.run_after(profilers, report, manifest, args.out, _progress, env)
    print(render_compare.compare_table(report, args.format, manifest))
    if not report.partial and not any(s.status == "timed" for s in report.summaries):
        _error("nothing was timed: " + "; ".join(_why_untimed(report)))
    if args.out is not None:
        if report.partial:
            manifest["stopped"] = sweeping.INTERRUPTED_NOTE
        sweeping.save(args.out, manifest, [report], report.partial)
        _progress(f"run saved to {args.out}/")
    if report.partial:
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if _failed([report]) else EXIT_OK


def _how_many(timing: Any) -> str:
    """The processes a comparison will run, as its first line says."""
    if timing.budget_s is None:
        return f"{timing.processes} processes"
    return f"{timing.processes} processes, more until decided within {timing.budget_s:g} s"


def _why_untimed(report: Any) -> list[str]:
    """First lines of the reasons each kernel has no figures (failures first)."""
    summaries = sorted(report.summaries, key=lambda s: s.status == "skipped")
    return [f"{s.kernel}: {s.status}: {s.reason.strip().splitlines()[0]}" for s in summaries]


def _failed(reports: Sequence[Any]) -> bool:
    """A kernel that failed, crashed or hung, or a verdict that is INVALID."""
    unfailed = ("timed", "skipped", "interrupted")
    return any(s.status not in unfailed for r in reports for s in r.summaries) or any(
        v.verdict == "invalid" for r in reports for v in r.verdicts
    )


def _not_saved(done: Any, out: Path, fmt: str) -> int:
    """A sweep whose save the storage refused (on one GPU, several or a
    cluster): every finished point's table (their figures were printed as
    each finished), one line naming the file and what the folder keeps,
    exit 4. The folder's run is partial unless its last save held every
    point (only the closing save, with the GPU state after, was refused)."""
    from gemmreg.rendering import render_compare

    print(render_compare.sweep_table(done.reports, "table" if fmt == "json" else fmt))
    kept = f"{out}/ keeps the run as last saved{' (partial)' if done.partial else ''}"
    _error(f"{done.not_saved}; {kept}; every point's figures are printed above")
    return EXIT_NOT_SAVED


def cmd_bench(args: argparse.Namespace) -> int:
    from gemmreg.contract import backend
    from gemmreg.deciding import preflight
    from gemmreg.discovery import registry
    from gemmreg.orchestrating import sweeping
    from gemmreg.orchestrating.progress import Meter
    from gemmreg.rendering import render_compare, speedup_means
    from gemmreg.running import ahead_pinned, devices
    from gemmreg.storage import run_folder

    _check_names("bench", args.names, 1)
    profilers = cli_profiler.chosen(args)
    chosen = cli_points.sweep_points(args)
    problems = [point.problem for point in chosen]
    ray_address = cli_device.ray_address(args)
    cli_profiler.refuse_with_ray(ray_address, profilers)
    cli_timing_setup.one_count(args, False)  # sequential on each actor's warm pool
    several = cli_device.several(args)
    # On Ray each actor starts its pool on its node; with --devices, one pool per GPU.
    ahead = None if ray_address is not None else cli_timing_setup.start_ahead(args, False, several)
    with cli_timing_setup.killed_on_error(ahead):
        info = backend.current()
        cli_device.require_gpu(args, info)
        cli_profiler.refuse_on(info.kind, profilers)
        on = _devices(several, info)
        ahead = ahead_pinned.unless_other_gpus(ahead, several, on)
        preflight.refuse_unfit([(p.mnk, p.dtype) for p in problems], info)
        timing = cli_timing_setup.timing_setup(args, info.is_gpu, sweep=True)
        kernels = registry.discover().select(args.names)
        preflight.require_runnable(kernels, problems, 1, "bench")
        out = args.out or run_folder.default_folder(Path("runs"), "bench")
        try:
            run_folder.claim(out, force=args.force)  # held until the command ends
        except UsageError:
            if args.out is None:
                out.rmdir()  # the new, empty folder made for it
            raise
    estimate = cli_points.warn_if_long("bench", kernels, problems, timing, info.is_gpu)
    slow = any(cli_points.interpreted(kernels))
    models = 1 if on is None else len(devices.groups(on))  # every point on each model
    meter = Meter(
        [float(p.flops) for p in problems] * models,
        "points",
        prefer_work=slow,
        estimate_s=estimate,
    )
    source = {"shapes_file": str(args.shapes)} if args.shapes is not None else {}
    common: dict[str, Any] = dict(
        meter=meter,
        weights=[point.weight for point in chosen] if args.shapes is not None else None,
        shapes=args.shape,
        dtypes=list(dict.fromkeys(p.dtype for p in problems)),
        layouts=list(dict.fromkeys(p.layout for p in problems)),
        **source,
    )
    try:
        if ray_address is not None:
            from gemmreg.orchestrating import ray_sweep

            done = ray_sweep.sweep_on_ray(
                kernels, problems, timing, info, out, meter.line, ray_address, **common
            )
        elif on is not None:
            from gemmreg.orchestrating import sharded_sweep

            done = sharded_sweep.sweep_on_devices(
                kernels, problems, timing, info, out, meter.line, on, ahead=ahead, **common
            )
        else:
            done = sweeping.sweep(kernels, problems, timing, info, out, meter.line, ahead, **common)
    except KeyboardInterrupt:  # a second Ctrl-C: the last save stands, whole
        _progress(f"gemmreg: the run as last saved is in {out}/")
        raise
    if done.not_saved is not None:
        return _not_saved(done, out, args.format)
    if not done.partial:  # before the output: `--format json` prints the run as saved
        cli_profiler.run_after_sweep(profilers, out, _progress)
    if args.format == "json":  # the run as saved: `report OUT --format json` prints the same
        from gemmreg.storage import runs

        manifest, reports, partial = runs.load_run(out)
        print(render_compare.run_document(manifest, reports, partial))
    else:
        print(render_compare.sweep_table(done.reports, args.format))
    means = speedup_means.mean_lines(done.reports)
    if means and args.format in ("table", "markdown"):
        print("\n" + "\n".join(means))
    elif means:  # csv and json keep stdout to the document
        _progress("\n".join(means))
    _progress(f"run saved to {out}/")
    if done.partial:
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if _failed(done.reports) else EXIT_OK
