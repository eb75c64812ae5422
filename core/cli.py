"""The ``gemmreg`` command: list, check, compare.

Exit codes: 0 success; 1 a check or comparison found a failure; 2 bad input
(unknown plugin, malformed shape, bad option); 3 gemmreg itself went wrong;
130 interrupted; 143 and 129 ended by SIGTERM and SIGHUP (workers killed
first). Bad input gets one line, never a traceback
(``GEMMREG_DEBUG=1`` shows tracebacks of gemmreg's own errors).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gemmreg import __version__

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
GPU_MAX_TIME_S = 3.0
BENCH_MAX_TIME_S = 1.0
"""A sweep times many points: a shorter cap keeps 5 processes x many shapes affordable."""
SHAPE_PATTERN = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*$")


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would print usage and exit 2 itself
        raise UsageError(message)


def parse_shape(text: str) -> tuple[int, int, int]:
    match = SHAPE_PATTERN.match(text)
    dims = tuple(int(g) for g in match.groups()) if match else ()
    if len(dims) != 3 or min(dims) < 1:
        raise UsageError(
            f"malformed shape {text!r}: expected MxNxK with positive integers, e.g. 512x512x512"
        )
    return dims


def _choices(value: str | None, allowed: Sequence[str], what: str) -> list[str]:
    """A comma-separated option checked against ``allowed``; empty means all of them."""
    if not value:
        return list(allowed)
    chosen = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in allowed]
    if unknown or not chosen:
        raise UsageError(
            f"unknown {what} {', '.join(unknown) or value!r}: choose from {', '.join(allowed)}"
        )
    return chosen


def _dtypes(value: str | None) -> list[str]:
    from gemmreg.records import DTYPES

    return _choices(value, DTYPES, "dtype")


def _layouts(value: str | None) -> list[str]:
    from gemmreg.records import LAYOUTS

    return _choices(value, LAYOUTS, "layout")


def _positive(name: str, value: int) -> int:
    if value < 1:
        raise UsageError(f"{name} must be at least 1, got {value}")
    return value


TIMEOUT_HELP = (
    "seconds one worker task (a case, or one process's timing of a plugin) may take "
    "before it is called hung and its worker killed (default: scaled to the problem's "
    "2*M*N*K; see gemmreg.timeouts)"
)


def _timeout(value: float | None) -> float | None:
    import math

    if value is not None and not (math.isfinite(value) and value > 0):
        raise UsageError(f"--timeout must be a positive number of seconds, got {value}")
    return value


def _timing_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, default=None, help=TIMEOUT_HELP)
    parser.add_argument(
        "--processes",
        type=int,
        default=None,
        help="independent worker processes (default: 5 on a GPU, 3 on the CPU)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="fixed number of rounds per process (default: rounds until every pair's "
        "paired ratio is known to +-0.5%%, capped)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=None,
        help="minimum heat-soak calls per plugin (default: >= 10 calls, >= 0.25 s and a "
        "steady SM clock on a GPU)",
    )
    parser.add_argument(
        "--max-time",
        type=float,
        default=None,
        dest="max_time",
        help="cap on the seconds of rounds per process "
        f"(default: {GPU_MAX_TIME_S:g} on a GPU; bench: {BENCH_MAX_TIME_S:g})",
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=None,
        help="equivalence margin in percent: an interval inside +-MARGIN%% is EQUIVALENT "
        "(default 1)",
    )
    parser.add_argument("--seed", type=int, default=None)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gemmreg", description="A plugin registry for GEMM kernels (C = A @ B).")
    parser.add_argument("--version", action="version", version=f"gemmreg {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    listing = commands.add_parser(
        "list", help="every plugin, where it came from, and whether it runs here"
    )
    listing.add_argument("--format", choices=["table", "markdown", "json"], default="table")

    check = commands.add_parser("check", help="run the correctness cases (exit 1 on any failure)")
    check.add_argument("names", nargs="*", help="plugins to check (default: all)")
    level = check.add_mutually_exclusive_group()
    level.add_argument(
        "--quick",
        dest="level",
        action="store_const",
        const="quick",
        help="the quick matrix (default; what CI runs on the CPU)",
    )
    level.add_argument(
        "--full",
        dest="level",
        action="store_const",
        const="full",
        help="the full matrix: every shape x layout, more seeds, large cases on a GPU",
    )
    check.add_argument("--dtype", help="comma-separated dtypes (default: all)")
    check.add_argument("--layout", help="comma-separated layouts (default: all)")
    check.add_argument("--seed", type=int, default=None)
    check.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=TIMEOUT_HELP.replace("(a case, or one process's timing of a plugin)", "(a case)")
        + "; after a plugin's first timeout its remaining cases are skipped",
    )
    check.add_argument("--format", choices=["table", "markdown", "json"], default="table")
    check.add_argument(
        "--out", type=Path, help="also write the table, JSON and manifest into this directory"
    )
    check.add_argument(
        "--sanitize",
        nargs="?",
        const="all",
        default=None,
        metavar="TOOLS",
        help="also run a small subset under NVIDIA compute-sanitizer's memcheck, racecheck, "
        "synccheck and initcheck, and gemmreg's smempoison (all five by default; or a "
        "comma-separated choice). Name plugins before it, or write --sanitize=TOOLS",
    )

    compare = commands.add_parser("compare", help="time plugins across independent processes")
    compare.add_argument("names", nargs="+", help="two or more plugins; each pair gets a verdict")
    compare.add_argument(
        "--shape", help="MxNxK (default: 512x512x512 on a GPU, 128x128x128 on the CPU)"
    )
    compare.add_argument("--dtype", default="fp32")
    _timing_options(compare)
    compare.add_argument("--format", choices=["table", "markdown", "csv", "json"], default="table")
    compare.add_argument(
        "--out", type=Path, help="also save the run (tables, CSV, samples, manifest) here"
    )

    bench = commands.add_parser("bench", help="a sweep: compare over many shapes and dtypes")
    bench.add_argument("names", nargs="+", help="plugins to time")
    bench.add_argument(
        "--shape",
        required=True,
        help="comma-separated MxNxK, N (square) or START:STOP:STEP (squares), e.g. 256:1024:256,2048",
    )
    bench.add_argument("--dtype", default="fp32", help="comma-separated dtypes")
    _timing_options(bench)
    bench.add_argument("--out", type=Path, help="save the run here (default: runs/bench-<time>)")

    report = commands.add_parser("report", help="render a saved run, or compare two runs")
    report.add_argument("runs", nargs="+", type=Path, help="RUN, or BEFORE AFTER")
    report.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="percent slowdown that counts as a regression (default 5)",
    )
    report.add_argument("--format", choices=["table", "markdown", "csv", "json"], default="table")
    report.add_argument(
        "--plot", type=Path, help="write TFLOP/s and roofline plots here (needs matplotlib)"
    )
    report.add_argument(
        "--verdicts",
        action="store_true",
        help="only the verdicts, one line per point and pair (table or markdown)",
    )
    return parser


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def cmd_list(args: argparse.Namespace) -> int:
    from gemmreg import registry, render

    print(render.list_table(registry.discover(), args.format))
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    import attrs
    from gemmreg import backend, checking, environment, matrix, registry, render

    tools = _sanitize_tools(args.sanitize)
    timeout = _timeout(args.timeout)
    found = registry.discover()
    kernels = found.select(args.names)
    gpu = backend.current().is_gpu
    level = args.level or "quick"
    dtypes, layouts = _dtypes(args.dtype), _layouts(args.layout)
    cases = matrix.build(level, gpu, dtypes, layouts)
    if args.seed is not None:
        cases = [attrs.evolve(case, seed=args.seed) for case in cases]

    def progress(result: checking.CaseResult) -> None:
        if result.status != "skip":
            _progress(f"  {result.id}: {result.status}")

    manifest = environment.manifest(kernels, level=level) if args.out is not None else {}
    results = checking.run_check(kernels, cases, gpu, on_result=progress, task_timeout=timeout)
    if tools:
        sanitize_cases = matrix.sanitize_cases(dtypes, layouts)
        if args.seed is not None:
            sanitize_cases = [attrs.evolve(case, seed=args.seed) for case in sanitize_cases]
        results += _sanitize(kernels, sanitize_cases, tools, args.out, manifest, progress)
    print(render.check_table(results, args.format))
    summary = {}
    if tools and args.format != "json":
        print("\n" + render.sanitize_summary(results, args.format))
    if tools:
        summary = {"sanitize-summary.txt": render.sanitize_summary(results, "table")}
    if args.out is not None:
        _write_evidence(
            args.out,
            {
                **summary,
                "check.txt": render.check_table(results, "table"),
                "check.md": render.check_table(results, "markdown"),
                "check.json": render.check_table(results, "json"),
                "manifest.json": render.dumps(manifest),
            },
        )
    for issue in found.issues:
        if issue.stage != "blocked":
            _progress(
                f"warning: plugin {issue.origin.plugin!r} not loaded: {issue.stage}: {issue.reason}"
            )
    return checking.exit_code(results)


def _sanitize_tools(value: str | None) -> tuple[str, ...]:
    from gemmreg import sanitizer

    if value is None:
        return ()
    try:
        return sanitizer.parse_tools(value)
    except sanitizer.UnknownToolError as error:
        raise UsageError(str(error)) from None


def _sanitize(
    kernels: Sequence[Any],
    cases: Sequence[Any],
    tools: Sequence[str],
    out: Path | None,
    manifest: dict[str, Any],
    progress: Any,
) -> list[Any]:
    """The sanitizer pass: skipped, with the reason, where a tool cannot run."""
    import tempfile

    from gemmreg import backend, sanitizer, sanitizing

    kind = backend.current().kind
    reasons = {tool: sanitizer.unavailable_reason(tool, kind) for tool in tools}
    for reason in dict.fromkeys(r for r in reasons.values() if r):
        skipped = [t for t, r in reasons.items() if r == reason]
        which = "" if len(skipped) == len(tools) else f" ({', '.join(skipped)})"
        _progress(f"sanitizer pass skipped{which}: {reason}")
    runnable = [t for t, r in reasons.items() if not r]
    log_dir = Path(".")
    if runnable:
        if out is not None:
            log_dir = out / "sanitizer"
        else:
            log_dir = Path(tempfile.mkdtemp(prefix="gemmreg-sanitize-"))
        executable = sanitizer.locate()
        _progress(f"sanitizer pass: {', '.join(runnable)}; raw logs in {log_dir}/")
        if out is not None:
            manifest["sanitizer"] = {
                "tools": list(tools),
                "executable": str(executable) if executable else None,
                "version": sanitizer.version(executable) if executable else None,
                "environment": sanitizer.NO_CACHING_ENV,
                "command": sanitizer.command(
                    executable or sanitizer.EXECUTABLE, "TOOL", Path("LOG")
                ),
            }
    return sanitizing.run_pass(kernels, cases, tools, kind, log_dir, on_result=progress)


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    """``512x512x512``, ``1024`` (a square) and ``256:1024:256`` (squares, inclusive)."""
    shapes: list[tuple[int, int, int]] = []
    for item in (part.strip() for part in text.split(",")):
        if re.fullmatch(r"\d+", item):
            size = int(item)
            shapes.append(parse_shape(f"{size}x{size}x{size}"))
        elif ":" in item:
            parts = item.split(":")
            if len(parts) != 3 or not all(p.isdigit() for p in parts) or int(parts[2]) < 1:
                raise UsageError(
                    f"malformed range {item!r}: expected START:STOP:STEP, e.g. 256:4096:256"
                )
            start, stop, step = map(int, parts)
            if start < 1 or stop < start:
                raise UsageError(f"malformed range {item!r}: need 1 <= START <= STOP")
            shapes += [(n, n, n) for n in range(start, stop + 1, step)]
        else:
            shapes.append(parse_shape(item))
    return shapes


class _Timing:
    """The timing options, checked, with the backend's defaults filled in."""

    def __init__(self, args: argparse.Namespace, gpu: bool):
        from gemmreg import comparing, stats

        default = comparing.GPU_DEFAULT_PROCESSES if gpu else comparing.CPU_DEFAULT_PROCESSES
        self.processes = _positive("--processes", args.processes or default)
        self.repeats = None if args.repeats is None else _positive("--repeats", args.repeats)
        if args.warmup is not None and args.warmup < 0:
            raise UsageError(f"--warmup must be at least 0, got {args.warmup}")
        self.warmup = args.warmup
        self.seed = args.seed if args.seed is not None else 20260719
        if args.max_time is not None and not args.max_time > 0:
            raise UsageError(f"--max-time must be positive, got {args.max_time}")
        self.max_time_s = args.max_time
        margin = 100 * stats.DEFAULT_MARGIN if args.margin is None else args.margin
        if not (math.isfinite(margin) and 0 < margin < 100):
            raise UsageError(f"--margin must be a percent between 0 and 100, got {args.margin}")
        self.margin = margin / 100
        self.task_timeout = _timeout(args.timeout)


def _clock(info: Any) -> str:
    if info.is_gpu:
        return (
            f"GPU events on {info.device_name}, L2 flushed before every sample; "
            "clocks, power and throttle reasons read around every slot (NVML)"
        )
    return f"perf_counter on the CPU ({info.device_name}), no L2 flush, Triton interpreted"


def _time_one(
    kernels: Any, problem: Any, timing: _Timing, info: Any, label: str = "", pool: Any = None
) -> Any:
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
        pool=pool,
        cold=pool is None,
        **({} if timing.task_timeout is None else {"task_timeout": timing.task_timeout}),
    )


def _check_names(names: Sequence[str], minimum: int) -> None:
    if len(names) < minimum:
        raise UsageError(f"needs at least {'two plugins' if minimum == 2 else 'one plugin'}")
    if len(set(names)) != len(names):
        raise UsageError("names a plugin twice")


def cmd_compare(args: argparse.Namespace) -> int:
    from gemmreg import backend, comparing, environment, registry, render_compare, runs
    from gemmreg.records import Problem

    try:
        _check_names(args.names, 2)
    except UsageError as error:
        raise UsageError(f"compare {error}") from None
    dtype = _dtypes(args.dtype)
    if len(dtype) != 1:
        raise UsageError("compare takes one --dtype")
    info = backend.current()
    shape = (
        parse_shape(args.shape)
        if args.shape
        else (comparing.GPU_DEFAULT_SHAPE if info.is_gpu else comparing.CPU_DEFAULT_SHAPE)
    )
    timing = _Timing(args, info.is_gpu)
    kernels = registry.discover().select(args.names)
    problem = Problem(m=shape[0], n=shape[1], k=shape[2], dtype=dtype[0])
    _progress(
        f"timing {', '.join(args.names)} at {problem.shape} {problem.dtype} on {info.kind} "
        f"({info.device_name}): {timing.processes} processes"
    )

    manifest = environment.manifest(kernels, seed=timing.seed)
    report = _flag_shared(_time_one(kernels, problem, timing, info), manifest)
    manifest["gpu_state_after"] = environment.gpu_state() if info.is_gpu else {}
    print(render_compare.compare_table(report, args.format, manifest))
    if args.out is not None:
        runs.write_run(args.out, manifest, [report], report.partial)
        _progress(f"run saved to {args.out}/")
    if report.partial:
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if _failed([report]) else EXIT_OK


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

    from gemmreg import backend, comparing, environment, registry, runs
    from gemmreg.records import Problem

    _check_names(args.names, 1)
    shapes = parse_shapes(args.shape)
    dtypes = _dtypes(args.dtype)
    info = backend.current()
    timing = _Timing(args, info.is_gpu)
    if timing.max_time_s is None and info.is_gpu:
        timing.max_time_s = BENCH_MAX_TIME_S
    kernels = registry.discover().select(args.names)
    out = args.out or Path("runs") / datetime.datetime.now().strftime("bench-%Y%m%d-%H%M%S")
    manifest = environment.manifest(kernels, seed=timing.seed, shapes=args.shape, dtypes=dtypes)
    points = [(shape, dtype) for dtype in dtypes for shape in shapes]
    reports: list[Any] = []
    partial = False
    # One pool of timing workers serves every point: their start-up is paid once.
    pool = comparing.Pool(size=timing.processes, env=dict(os.environ), gpu=info.is_gpu)
    pool.start()
    try:
        for index, (shape, dtype) in enumerate(points, 1):
            problem = Problem(m=shape[0], n=shape[1], k=shape[2], dtype=dtype)
            label = f"[{index}/{len(points)}] {problem.shape} {dtype}: "
            _progress(f"{label}timing {', '.join(args.names)}")
            report = _flag_shared(_time_one(kernels, problem, timing, info, label, pool), manifest)
            reports.append(report)
            partial = report.partial
            manifest["gpu_state_after"] = environment.gpu_state() if info.is_gpu else {}
            runs.write_run(out, manifest, reports, partial=partial or index < len(points))
            if partial:
                break
    finally:
        pool.close()
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


def cmd_report(args: argparse.Namespace) -> int:
    from gemmreg import regression, render, render_compare, runs

    if len(args.runs) > 2:
        raise UsageError("report takes one run, or two to compare")
    try:
        loaded = [runs.load_run(path) for path in args.runs]
    except runs.RunError as error:
        raise UsageError(str(error)) from None
    if args.plot is not None:
        from gemmreg import plots

        written = plots.write_plots(args.plot, loaded[-1][1], loaded[-1][0])
        _progress(f"plots written: {', '.join(str(p) for p in written)}")
    if len(loaded) == 1:
        _, reports, partial = loaded[0]
        if partial:
            print("[PARTIAL run: interrupted before the last point]")
        if args.verdicts:
            print(render_compare.verdict_table(reports, args.format))
        elif args.format in ("csv", "json"):
            rows = [row for r in reports for row in render_compare.summary_rows(r)]
            print(render_compare.csv_text(rows) if args.format == "csv" else render.dumps(reports))
        else:
            print("\n\n".join(render_compare.compare_table(r, args.format) for r in reports))
            if len(reports) > 1:  # a sweep: every verdict again, one line each
                print("\n" + render_compare.verdict_table(reports, args.format))
        return EXIT_OK
    threshold = regression.DEFAULT_THRESHOLD_PCT if args.threshold is None else args.threshold
    (before_manifest, before, _), (after_manifest, after, _) = loaded
    if not (math.isfinite(threshold) and threshold >= 0):
        raise UsageError(f"--threshold must be a finite percent >= 0, got {args.threshold}")
    changes = regression.compare_runs(before, after, threshold)
    print(
        render_compare.changes_table(
            changes, args.format, before_manifest, after_manifest, threshold
        )
    )
    partial = [c for c in changes if c.verdict == "no verdict" and "partial" in c.explanation]
    if partial:
        _progress(f"gemmreg: {len(partial)} point(s) are partial in a run: no verdict on them")
    return EXIT_FAILURE if any(c.regression for c in changes) or partial else EXIT_OK


def _write_evidence(directory: Path, files: dict[str, str]) -> None:
    from gemmreg import render

    for name, text in files.items():
        render.write_atomically(directory / name, text + "\n")
    _progress(f"evidence written to {directory}/")


COMMANDS = {
    "list": cmd_list,
    "check": cmd_check,
    "compare": cmd_compare,
    "bench": cmd_bench,
    "report": cmd_report,
}


def main(argv: Sequence[str] | None = None) -> int:
    from gemmreg import interrupts
    from gemmreg.registry import UnknownKernelError

    interrupts.install_termination_handlers()
    try:
        args = build_parser().parse_args(argv)
        code = COMMANDS[args.command](args)
        terminated = interrupts.termination_signal()  # a command that kept partial results
        return 128 + terminated if terminated else code
    except (UsageError, UnknownKernelError) as error:
        message = error.args[0] if error.args else str(error)
        print(f"gemmreg: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as error:
        if isinstance(error, interrupts.Terminated):
            print(f"gemmreg: {error}; workers killed", file=sys.stderr)
            return 128 + error.signum
        print("gemmreg: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as error:
        if os.environ.get("GEMMREG_DEBUG"):
            traceback.print_exc()
        print(
            f"gemmreg: internal error: {type(error).__name__}: {error} "
            "(set GEMMREG_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
