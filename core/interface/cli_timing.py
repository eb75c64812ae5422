"""``gemmreg compare`` and ``bench``: the timing commands (``report`` reads
their saved runs: :mod:`gemmreg.interface.cli_report`). Here the options are parsed
and checked and the points decided; the timing and the saving are
:mod:`gemmreg.orchestrating.sweeping`'s, the tables :mod:`gemmreg.rendering.render_compare`'s."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from gemmreg.deciding import options as opt
from gemmreg.deciding.options import UsageError, parse_shape, parse_shapes
from gemmreg.interface.cli_common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    _check_names,
    _devices,
    _dtypes,
    _error,
    _progress,
    _timeout,
)
from gemmreg.running.tracing import trace


def _timing(args: argparse.Namespace, gpu: bool, sweep: bool = False) -> Any:
    """The timing options (bounded by argparse) with the backend's defaults filled in."""
    from gemmreg.deciding import timing_options

    return timing_options.timing_options(
        gpu,
        sweep=sweep,
        processes=args.processes,
        repeats=args.repeats,
        warmup=args.warmup,
        seed=args.seed,
        max_time_s=args.max_time,
        margin_pct=args.margin,
        task_timeout=_timeout(args.timeout),
    )


def _start_ahead(args: argparse.Namespace, cold: bool) -> Any:
    """The command's workers, started before this process imports torch and
    reads the plugins (:class:`gemmreg.running.worker_pool.Ahead`), or None."""
    from gemmreg.contract import backend
    from gemmreg.deciding import timing_options
    from gemmreg.running import worker_pool

    if not worker_pool.starting_ahead():
        return None
    gpu = backend.gpu_likely()
    default = timing_options.default_processes(gpu)
    processes = args.processes if args.processes is not None else default
    trace("starting workers ahead")
    return worker_pool.start_ahead(args.names if cold else [], processes, gpu, cold=cold)


@contextlib.contextmanager
def _killed_on_error(ahead: Any) -> Iterator[None]:
    """The workers started ahead are killed if the command fails before it
    hands them their work (bad input found once the plugins are read)."""
    try:
        yield
    except BaseException:
        if ahead is not None:
            ahead.abandon()
        raise


def cmd_compare(args: argparse.Namespace) -> int:
    from gemmreg.contract import backend
    from gemmreg.contract.records import Problem
    from gemmreg.deciding import preflight, timing_options
    from gemmreg.discovery import registry
    from gemmreg.orchestrating import sweeping
    from gemmreg.rendering import render_compare

    _check_names("compare", args.names, 2)
    dtype = _dtypes(args.dtype)
    if len(dtype) != 1:
        raise UsageError("compare takes one --dtype")
    shape_given = parse_shape(args.shape) if args.shape is not None else None
    ahead = _start_ahead(args, cold=True) if args.devices is None else None
    with _killed_on_error(ahead):
        info = backend.current()
        chosen = _devices(args.devices, info)
        if chosen is not None:
            from gemmreg.running.devices import one_model

            one_model(chosen, "compare")
        shape = timing_options.default_shape(info.is_gpu) if shape_given is None else shape_given
        preflight.refuse_unfit([(shape, dtype[0])], info)
        timing = _timing(args, info.is_gpu)
        kernels = registry.discover().select(args.names)
        problem = Problem(m=shape[0], n=shape[1], k=shape[2], dtype=dtype[0])
        preflight.require_runnable(kernels, [problem], 2, "compare")
        if args.out is not None:
            opt.writable_directory(args.out, "--out")
    _progress(
        f"timing {', '.join(args.names)} at {problem.shape} {problem.dtype} on {info.kind} "
        f"({info.device_name}): {timing.processes} processes"
    )
    trace("plugins discovered, options checked")
    report, manifest = sweeping.compare(
        kernels, problem, timing, info, _progress, ahead, chosen or ()
    )
    print(render_compare.compare_table(report, args.format, manifest))
    if not report.partial and not any(s.status == "timed" for s in report.summaries):
        _error("nothing was timed: " + "; ".join(_why_untimed(report)))
    if args.out is not None:
        sweeping.save(args.out, manifest, [report], report.partial)
        _progress(f"run saved to {args.out}/")
    if report.partial:
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if _failed([report]) else EXIT_OK


def _why_untimed(report: Any) -> list[str]:
    """First lines of the reasons each kernel has no figures (failures first)."""
    summaries = sorted(report.summaries, key=lambda s: s.status == "skipped")
    return [f"{s.kernel}: {s.status}: {s.reason.strip().splitlines()[0]}" for s in summaries]


def _failed(reports: Sequence[Any]) -> bool:
    """A kernel that failed, crashed or hung, or a verdict that is INVALID."""
    return any(s.status not in ("timed", "skipped") for r in reports for s in r.summaries) or any(
        v.verdict == "invalid" for r in reports for v in r.verdicts
    )


def cmd_bench(args: argparse.Namespace) -> int:
    import datetime

    from gemmreg.contract import backend
    from gemmreg.contract.records import Problem
    from gemmreg.deciding import preflight
    from gemmreg.discovery import registry
    from gemmreg.orchestrating import sweeping
    from gemmreg.rendering import render_compare
    from gemmreg.running import ray_cluster

    _check_names("bench", args.names, 1)
    shapes = parse_shapes(args.shape)
    dtypes = _dtypes(args.dtype)
    points = [(shape, dtype) for dtype in dtypes for shape in shapes]
    if len(points) > opt.MAX_SWEEP_POINTS:
        raise UsageError(
            f"{len(shapes)} shapes x {len(dtypes)} dtypes make {len(points)} points; "
            f"bench takes at most {opt.MAX_SWEEP_POINTS}"
        )
    ray_address = ray_cluster.address(args.ray)
    if ray_address is not None:
        if args.devices is not None:
            raise UsageError("--ray and --devices: one or the other (Ray gives each task its GPU)")
        ray_cluster.require()
    # Workers started ahead are not pinned: with --devices each GPU's pool starts later.
    spread = args.devices is not None or ray_address is not None
    ahead = None if spread else _start_ahead(args, cold=False)
    with _killed_on_error(ahead):
        info = backend.current()
        chosen = _devices(args.devices, info)
        preflight.refuse_unfit(points, info)
        timing = _timing(args, info.is_gpu, sweep=True)
        kernels = registry.discover().select(args.names)
        problems = [Problem(m=s[0], n=s[1], k=s[2], dtype=d) for s, d in points]
        preflight.require_runnable(kernels, problems, 1, "bench")
        out = args.out or Path("runs") / datetime.datetime.now().strftime("bench-%Y%m%d-%H%M%S")
        opt.writable_directory(out, "--out")
    if ray_address is not None:
        from gemmreg.orchestrating import ray_sweep

        done = ray_sweep.sweep_on_ray(
            kernels,
            problems,
            timing,
            info,
            out,
            _progress,
            ray_address,
            shapes=args.shape,
            dtypes=dtypes,
        )
    elif chosen is not None:
        from gemmreg.orchestrating import sharded_sweep

        done = sharded_sweep.sweep_on_devices(
            kernels,
            problems,
            timing,
            info,
            out,
            _progress,
            chosen,
            shapes=args.shape,
            dtypes=dtypes,
        )
    else:
        done = sweeping.sweep(
            kernels, problems, timing, info, out, _progress, ahead, shapes=args.shape, dtypes=dtypes
        )
    print(render_compare.sweep_table(done.reports))
    _progress(f"run saved to {out}/")
    if done.partial:
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if _failed(done.reports) else EXIT_OK
