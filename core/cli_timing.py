"""``gemmreg compare`` and ``bench``: the timing commands (``report`` reads
their saved runs: :mod:`gemmreg.cli_report`)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gemmreg import options as opt
from gemmreg.cli_common import (
    BENCH_MAX_TIME_S,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    _check_names,
    _dtypes,
    _error,
    _progress,
    _timeout,
)
from gemmreg.options import UsageError, parse_shape, parse_shapes
from gemmreg.tracing import trace


class _Timing:
    """The timing options (bounded by argparse) with the backend's defaults filled in."""

    def __init__(self, args: argparse.Namespace, gpu: bool):
        from gemmreg import comparing, stats

        default = comparing.GPU_DEFAULT_PROCESSES if gpu else comparing.CPU_DEFAULT_PROCESSES
        self.processes: int = args.processes if args.processes is not None else default
        self.repeats: int | None = args.repeats
        self.warmup: int | None = args.warmup
        self.seed: int = args.seed if args.seed is not None else 20260719
        self.max_time_s: float | None = args.max_time
        self.margin: float = stats.DEFAULT_MARGIN if args.margin is None else args.margin / 100
        self.task_timeout = _timeout(args.timeout)


def _clock(info: Any) -> str:
    if info.is_gpu:
        return (
            f"GPU events on {info.device_name}, L2 flushed before every sample; "
            "clocks, power and throttle reasons read around every slot (NVML)"
        )
    return f"perf_counter on the CPU ({info.device_name}), no L2 flush, Triton interpreted"


def _time_one(
    kernels: Any,
    problem: Any,
    timing: _Timing,
    info: Any,
    label: str = "",
    pool: Any = None,
    while_starting: Any = None,
    need: int = 1,
    ahead: Any = None,
) -> Any:
    """Time ``kernels`` on one problem; ``need``: see :func:`gemmreg.comparing.run_compare`."""
    from gemmreg import comparing

    def progress(run: comparing.ProcessRun) -> None:
        if run.median_ms is not None:
            detail = (
                f"median {run.median_ms:.4g} ms over {len(run.round_ms)} rounds, "
                f"{run.samples} samples, {run.exposure_s:.2f} s exposed"
            )
        else:
            detail = run.reason.splitlines()[0] if run.reason else ""
        _progress(
            f"  {label}process {run.process + 1}/{timing.processes}: {run.kernel}: {run.status} {detail}"
        )

    def cold_progress(cold: Any) -> None:
        detail = cold.reason.splitlines()[0] if cold.reason else ""
        if cold.prepare_s is not None and cold.first_call_s is not None:
            detail = f"prepare {cold.prepare_s:.3g} s, first call {cold.first_call_s:.3g} s"
        _progress(f"  {label}cold start: {cold.kernel}: {cold.status} {detail}".rstrip())

    return comparing.run_compare(
        kernels,
        problem,
        processes=timing.processes,
        seed=timing.seed,
        clock=_clock(info),
        device_name=info.device_name,
        repeats=timing.repeats,
        warmup=timing.warmup,
        max_time_s=timing.max_time_s,
        margin=timing.margin,
        gpu=info.is_gpu,
        on_run=progress,
        on_cold=cold_progress,
        pool=pool,
        cold=pool is None,
        while_starting=while_starting,
        need=need,
        ahead=ahead,
        **({} if timing.task_timeout is None else {"task_timeout": timing.task_timeout}),
    )


def _start_ahead(args: argparse.Namespace, cold: bool) -> Any:
    """The command's workers, started before this process imports torch and
    reads the plugins (:class:`gemmreg.worker_pool.Ahead`), or None."""
    from gemmreg import backend, comparing, worker_pool

    if not worker_pool.starting_ahead():
        return None
    gpu = backend.gpu_likely()
    default = comparing.GPU_DEFAULT_PROCESSES if gpu else comparing.CPU_DEFAULT_PROCESSES
    processes = args.processes if args.processes is not None else default
    trace("starting workers ahead")
    return worker_pool.start_ahead(args.names if cold else [], processes, gpu, cold=cold)


def cmd_compare(args: argparse.Namespace) -> int:
    from gemmreg import backend, comparing, environment, preflight, registry, render_compare, runs
    from gemmreg.records import Problem

    _check_names("compare", args.names, 2)
    dtype = _dtypes(args.dtype)
    if len(dtype) != 1:
        raise UsageError("compare takes one --dtype")
    shape_given = parse_shape(args.shape) if args.shape is not None else None
    ahead = _start_ahead(args, cold=True)
    try:
        info = backend.current()
        if shape_given is None:
            shape = comparing.GPU_DEFAULT_SHAPE if info.is_gpu else comparing.CPU_DEFAULT_SHAPE
        else:
            shape = shape_given
        preflight.refuse_unfit([(shape, dtype[0])], info)
        timing = _Timing(args, info.is_gpu)
        kernels = registry.discover().select(args.names)
        problem = Problem(m=shape[0], n=shape[1], k=shape[2], dtype=dtype[0])
        preflight.require_runnable(kernels, [problem], 2, "compare")
        if args.out is not None:
            opt.writable_directory(args.out, "--out")
    except BaseException:
        if ahead is not None:
            ahead.abandon()
        raise
    _progress(
        f"timing {', '.join(args.names)} at {problem.shape} {problem.dtype} on {info.kind} "
        f"({info.device_name}): {timing.processes} processes"
    )

    trace("plugins discovered, options checked")
    manifest: dict[str, Any] = {}

    def take_manifest() -> None:  # while the workers start
        manifest.update(environment.manifest(kernels, seed=timing.seed))
        trace("manifest taken")

    # A verdict is about a pair: with fewer than two kernels through their cold
    # starts, nothing is timed (the survivor alone would answer no question).
    report = _time_one(
        kernels, problem, timing, info, while_starting=take_manifest, need=2, ahead=ahead
    )
    report = _flag_shared(report, manifest)
    manifest["gpu_state_after"] = environment.gpu_state() if info.is_gpu else {}
    trace("timing done, GPU state read")
    print(render_compare.compare_table(report, args.format, manifest))
    if not report.partial and not any(s.status == "timed" for s in report.summaries):
        _error("nothing was timed: " + "; ".join(_why_untimed(report)))
    if args.out is not None:
        views = render_compare.run_views([report], report.partial)
        runs.write_run(args.out, manifest, [report], report.partial, views)
        _progress(f"run saved to {args.out}/")
    if report.partial:
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if _failed([report]) else EXIT_OK


def _why_untimed(report: Any) -> list[str]:
    """First lines of the reasons each kernel has no figures (failures first)."""
    summaries = sorted(report.summaries, key=lambda s: s.status == "skipped")
    return [f"{s.kernel}: {s.status}: {s.reason.strip().splitlines()[0]}" for s in summaries]


def _flag_shared(report: Any, manifest: dict[str, Any]) -> Any:
    """A verdict taken beside another process on the GPU says so."""
    import attrs
    from gemmreg import environment

    busy = environment.shared_gpu(manifest)
    if not busy:
        return report
    _progress(f"warning: SHARED GPU: {busy}")
    note = f"SHARED GPU: {busy}"
    return attrs.evolve(
        report, verdicts=tuple(attrs.evolve(v, notes=(*v.notes, note)) for v in report.verdicts)
    )


def _failed(reports: Sequence[Any]) -> bool:
    """A kernel that failed, crashed or hung, or a verdict that is INVALID."""
    return any(s.status not in ("timed", "skipped") for r in reports for s in r.summaries) or any(
        v.verdict == "invalid" for r in reports for v in r.verdicts
    )


def cmd_bench(args: argparse.Namespace) -> int:
    import datetime

    from gemmreg import backend, environment, preflight, registry, render_compare, runs, worker_pool
    from gemmreg.records import Problem

    _check_names("bench", args.names, 1)
    shapes = parse_shapes(args.shape)
    dtypes = _dtypes(args.dtype)
    points = [(shape, dtype) for dtype in dtypes for shape in shapes]
    if len(points) > opt.MAX_SWEEP_POINTS:
        raise UsageError(
            f"{len(shapes)} shapes x {len(dtypes)} dtypes make {len(points)} points; "
            f"bench takes at most {opt.MAX_SWEEP_POINTS}"
        )
    ahead = _start_ahead(args, cold=False)
    try:
        info = backend.current()
        preflight.refuse_unfit(points, info)
        timing = _Timing(args, info.is_gpu)
        if timing.max_time_s is None and info.is_gpu:
            timing.max_time_s = BENCH_MAX_TIME_S
        kernels = registry.discover().select(args.names)
        problems = [Problem(m=s[0], n=s[1], k=s[2], dtype=d) for s, d in points]
        preflight.require_runnable(kernels, problems, 1, "bench")
        out = args.out or Path("runs") / datetime.datetime.now().strftime("bench-%Y%m%d-%H%M%S")
        opt.writable_directory(out, "--out")
    except BaseException:
        if ahead is not None:
            ahead.abandon()
        raise
    reports: list[Any] = []
    partial = False
    # One pool of timing workers serves every point: their start-up is paid
    # once, and overlaps the manifest's (and, started ahead, the plugins').
    if ahead is not None:
        pool = ahead.pool
        pool.fit(timing.processes, info.is_gpu)
    else:
        pool = worker_pool.Pool(size=timing.processes, env=dict(os.environ), gpu=info.is_gpu)
        pool.start()
    try:
        manifest = environment.manifest(kernels, seed=timing.seed, shapes=args.shape, dtypes=dtypes)
        for index, problem in enumerate(problems, 1):
            label = f"[{index}/{len(points)}] {problem.shape} {problem.dtype}: "
            _progress(f"{label}timing {', '.join(args.names)}")
            report = _flag_shared(_time_one(kernels, problem, timing, info, label, pool), manifest)
            reports.append(report)
            partial = report.partial
            manifest["gpu_state_after"] = environment.gpu_state() if info.is_gpu else {}
            unfinished = partial or index < len(points)
            views = render_compare.run_views(reports, unfinished)
            runs.write_run(out, manifest, reports, unfinished, views)
            if partial:
                break
    finally:
        pool.close()
        if ahead is not None:
            ahead.close()  # its caches folder
    _print_sweep(reports)
    _progress(f"run saved to {out}/")
    if partial:
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if _failed(reports) else EXIT_OK


def _print_sweep(reports: Sequence[Any], fmt: str = "table") -> None:
    from gemmreg import render, render_compare
    from tabulate import tabulate

    rows = [row for report in reports for row in render_compare.summary_rows(report)]
    if fmt == "csv":
        print(render_compare.csv_text(rows))
        return
    table = [
        [
            f"{r['m']}x{r['n']}x{r['k']}",
            r["dtype"],
            r["kernel"],
            r["math"],
            f"{r['center_ms']:.5g}" if r["center_ms"] else "-",
            f"{r['low_ms']:.5g} to {r['high_ms']:.5g}" if r["low_ms"] else "-",
            f"{r['tflops']:.4g}" if r["tflops"] else "-",
            r["status"]
            if r["status"] != "timed"
            else ("launch-bound" if r["launch_bound"] else "ok"),
        ]
        for r in rows
    ]
    headers = ["shape", "dtype", "plugin", "math", "median ms", "range (ms)", "TFLOP/s", "notes"]
    print(tabulate(table, headers=headers, tablefmt=render.TABLE_FORMATS.get(fmt, "simple")))
