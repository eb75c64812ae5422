"""The ``gemmreg`` command: list, check, compare.

Exit codes: 0 success; 1 a check or comparison found a failure; 2 bad input
(unknown plugin, malformed shape, bad option); 3 gemmreg itself went wrong;
130 interrupted. Bad input gets one line, never a traceback
(``GEMMREG_DEBUG=1`` shows tracebacks of gemmreg's own errors).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gemmreg import __version__

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
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


def _dtypes(value: str | None) -> list[str]:
    from gemmreg.records import DTYPES

    if not value:
        return list(DTYPES)
    chosen = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [d for d in chosen if d not in DTYPES]
    if unknown or not chosen:
        raise UsageError(
            f"unknown dtype {', '.join(unknown) or value!r}: choose from {', '.join(DTYPES)}"
        )
    return chosen


def _layouts(value: str | None) -> list[str]:
    from gemmreg.records import LAYOUTS

    if not value:
        return list(LAYOUTS)
    chosen = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in LAYOUTS]
    if unknown or not chosen:
        raise UsageError(
            f"unknown layout {', '.join(unknown) or value!r}: choose from {', '.join(LAYOUTS)}"
        )
    return chosen


def _positive(name: str, value: int) -> int:
    if value < 1:
        raise UsageError(f"{name} must be at least 1, got {value}")
    return value


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
    check.add_argument("--format", choices=["table", "markdown", "json"], default="table")
    check.add_argument(
        "--out", type=Path, help="also write the table, JSON and manifest into this directory"
    )

    compare = commands.add_parser("compare", help="time plugins across independent processes")
    compare.add_argument(
        "names",
        nargs="+",
        help="two or more plugins; each pair gets a verdict, earlier-named as baseline",
    )
    compare.add_argument(
        "--shape", help="MxNxK (default: 512x512x512 on a GPU, 128x128x128 on the CPU)"
    )
    compare.add_argument("--dtype", default="fp32")
    compare.add_argument("--processes", type=int, default=None)
    compare.add_argument("--warmup", type=int, default=None)
    compare.add_argument("--repeats", type=int, default=None)
    compare.add_argument("--seed", type=int, default=None)
    compare.add_argument("--format", choices=["table", "markdown", "json"], default="table")
    compare.add_argument(
        "--out", type=Path, help="also write the report, JSON and manifest into this directory"
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

    found = registry.discover()
    kernels = found.select(args.names)
    gpu = backend.current().is_gpu
    level = args.level or "quick"
    cases = matrix.build(level, gpu, _dtypes(args.dtype), _layouts(args.layout))
    if args.seed is not None:
        cases = [attrs.evolve(case, seed=args.seed) for case in cases]

    def progress(result: checking.CaseResult) -> None:
        if result.status != "skip":
            _progress(f"  {result.id}: {result.status}")

    manifest = environment.manifest(kernels, level=level) if args.out is not None else {}
    results = checking.run_check(kernels, cases, gpu, on_result=progress)
    print(render.check_table(results, args.format))
    if args.out is not None:
        _write_evidence(
            args.out,
            {
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


def cmd_compare(args: argparse.Namespace) -> int:
    from gemmreg import backend, comparing, environment, registry, render
    from gemmreg.records import Problem

    if len(args.names) < 2:
        raise UsageError("compare needs at least two plugins")
    if len(set(args.names)) != len(args.names):
        raise UsageError("compare names a plugin twice")
    dtype = _dtypes(args.dtype)
    if len(dtype) != 1:
        raise UsageError("compare takes one --dtype")
    info = backend.current()
    gpu = info.is_gpu
    shape = (
        parse_shape(args.shape)
        if args.shape
        else (comparing.GPU_DEFAULT_SHAPE if gpu else comparing.CPU_DEFAULT_SHAPE)
    )
    processes = _positive("--processes", args.processes or comparing.DEFAULT_PROCESSES)
    warmup = (
        args.warmup
        if args.warmup is not None
        else (comparing.GPU_DEFAULT_WARMUP if gpu else comparing.CPU_DEFAULT_WARMUP)
    )
    repeats = _positive(
        "--repeats",
        args.repeats or (comparing.GPU_DEFAULT_REPEATS if gpu else comparing.CPU_DEFAULT_REPEATS),
    )
    if warmup < 0:
        raise UsageError(f"--warmup must be at least 0, got {warmup}")
    seed = args.seed if args.seed is not None else 20260719

    found = registry.discover()
    kernels = found.select(args.names)
    problem = Problem(m=shape[0], n=shape[1], k=shape[2], dtype=dtype[0])
    clock = (
        f"GPU events on {info.device_name}, L2 flushed before every sample"
        if gpu
        else f"perf_counter on the CPU ({info.device_name}), no L2 flush, Triton interpreted"
    )
    _progress(
        f"timing {', '.join(args.names)} at {problem.shape} {problem.dtype} on {info.kind} "
        f"({info.device_name}): {processes} processes x ({warmup} + {repeats})"
    )

    def progress(run: comparing.ProcessRun) -> None:
        median = (
            f"median {run.median_ms:.4g} ms"
            if run.median_ms is not None
            else run.reason.splitlines()[0]
            if run.reason
            else ""
        )
        _progress(f"  process {run.process + 1}/{processes}: {run.kernel}: {run.status} {median}")

    manifest = environment.manifest(kernels, seed=seed)
    report = comparing.run_compare(
        kernels,
        problem,
        processes=processes,
        warmup=warmup,
        repeats=repeats,
        seed=seed,
        clock=clock,
        on_run=progress,
    )
    manifest["gpu_state_after"] = environment.gpu_state() if gpu else {}
    text = render.compare_table(report, args.format, manifest)
    print(text)
    if args.out is not None:
        _write_evidence(
            args.out,
            {
                "compare.txt": render.compare_table(report, "table"),
                "compare.md": render.compare_table(report, "markdown"),
                "compare.json": render.dumps(report),
                "manifest.json": render.dumps(manifest),
            },
        )
    failed = any(s.status != "timed" for s in report.summaries)
    if report.partial:
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if failed else EXIT_OK


def _write_evidence(directory: Path, files: dict[str, str]) -> None:
    from gemmreg import render

    for name, text in files.items():
        render.write_atomically(directory / name, text + "\n")
    _progress(f"evidence written to {directory}/")


COMMANDS = {"list": cmd_list, "check": cmd_check, "compare": cmd_compare}


def main(argv: Sequence[str] | None = None) -> int:
    from gemmreg.registry import UnknownKernelError

    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except (UsageError, UnknownKernelError) as error:
        message = error.args[0] if error.args else str(error)
        print(f"gemmreg: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
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
