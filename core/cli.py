"""The ``gemmreg`` command line: its parser and dispatch (the commands are in
:mod:`gemmreg.commands.cli_check`, :mod:`gemmreg.commands.cli_timing` and :mod:`gemmreg.commands.cli_report`).

Exit codes: 0 success; 1 a check or comparison found a failure (or an INVALID
verdict), ``check`` ran nothing at all, or ``--strict`` found an unavailable or
broken plugin; 2 bad input (unknown plugin, malformed shape, option out of
bounds, unusable path, malformed saved run, fewer than two runnable plugins for
``compare``, an ``--out`` another run holds or that holds a run), checked
before any work starts; 3 gemmreg itself went wrong; 4 the storage refused a
save mid-run (full disk, unwritable folder: the figures were printed);
130 interrupted (what finished is kept); 143 and 129 ended by SIGTERM and
SIGHUP (workers killed first, what finished kept). Bad input gets one line, never a traceback
(``GEMMREG_DEBUG=1`` shows tracebacks of gemmreg's own errors).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from gemmreg.commands import (
    argparse_guesses,
    cli_device,
    cli_options,
    cli_plot_options,
    cli_profiler,
)
from gemmreg.commands.cli_check import cmd_check, cmd_list
from gemmreg.commands.cli_common import (
    EXIT_FAILURE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NOT_SAVED,
    EXIT_OK,
    EXIT_USAGE,
)
from gemmreg.commands.cli_report import cmd_report
from gemmreg.commands.cli_timing import cmd_bench, cmd_compare
from gemmreg.contract import options as opt
from gemmreg.contract.options import UsageError, parse_shape, parse_shapes
from gemmreg.contract.version import __version__
from gemmreg.reporting import run_folder
from gemmreg.reporting.not_saved import RunNotSaved
from gemmreg.workers import quick_exit

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_NOT_SAVED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "build_parser",
    "main",
    "parse_shape",
    "parse_shapes",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would print usage and exit 2 itself
        raise UsageError(message + argparse_guesses.guess(self, message))


def build_parser() -> argparse.ArgumentParser:
    from gemmreg.checking import sanitizer_tools
    from gemmreg.reporting import regression
    from gemmreg.timing import timing_options

    parser = _Parser(prog="gemmreg", description="A plugin registry for GEMM kernels (C = A @ B).")
    parser.add_argument("--version", action="version", version=f"gemmreg {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    listing = commands.add_parser(
        "list", help="every plugin, where it came from, and whether it runs here"
    )
    cli_options.format_option(listing)
    cli_options.strict_option(listing, "it lists")

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
    check.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="every case: a line as it passes, and a row in the table (by default passing "
        "cases are one row per plugin, kind and dtype, with the worst error; failures always "
        "get their own; --out, csv and json always hold every case)",
    )
    check.add_argument(
        "--dtype",
        help="comma-separated dtypes (default: fp32, fp16, bf16); the low-precision inputs "
        "fp8e4m3, fp8e5m2 and int8 run when named",
    )
    check.add_argument("--layout", help="comma-separated layouts (default: all)")
    cli_options.fp8_options(check, many=True)
    cli_options.batch_options(check, many=True)
    cli_options.group_options(check, many=True)
    cli_options.seed_option(check)
    check.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=cli_options.TIMEOUT_HELP.replace(
            "(a case, or one process's timing of a plugin)", "(a case)"
        )
        + "; after a plugin's first timeout its remaining cases are skipped",
    )
    cli_options.format_option(check)
    cli_options.devices_option(check, "each plugin's cases on one of them", ray=True)
    cli_options.out_option(check, "also write the table, JSON and manifest into this directory")
    cli_options.force_option(check)
    cli_options.strict_option(check, "it checks")
    check.add_argument(
        "--sanitize",
        nargs="?",
        const="all",
        default=None,
        metavar="TOOLS",
        help="also run a small subset under NVIDIA compute-sanitizer's "
        f"{sanitizer_tools.in_words(sanitizer_tools.COMPUTE_SANITIZER_TOOLS)}, and gemmreg's "
        f"{sanitizer_tools.SMEM_POISON} ({sanitizer_tools.default_tools_in_words()}; or a "
        "comma-separated choice). Name plugins before it, or write --sanitize=TOOLS",
    )

    compare = commands.add_parser("compare", help="time plugins across independent processes")
    compare.add_argument("names", nargs="+", help="two or more plugins; each pair gets a verdict")
    gpu_shape, cpu_shape = (
        "x".join(map(str, timing_options.default_shape(gpu))) for gpu in (True, False)
    )
    compare_shape = compare.add_mutually_exclusive_group()
    compare_shape.add_argument(
        "--shape", help=f"MxNxK (default: {gpu_shape} on a GPU, {cpu_shape} on the CPU)"
    )
    cli_options.shapes_option(compare_shape, "a file of one shape (compare times one)")
    compare.add_argument(
        "--dtype",
        default="fp32",
        help="comma-separated dtypes: the pairs judged at each in turn, a verdict per dtype",
    )
    compare.add_argument("--layout", default=None, help="one layout (default: rowmajor)")
    cli_options.fp8_options(compare, many=False)
    cli_options.batch_options(compare, many=False)
    cli_options.group_options(compare, many=False)
    cli_options.add_timing_options(compare)
    cli_options.devices_option(compare, "its processes spread over GPUs of one model", ray=True)
    cli_options.format_option(compare)
    cli_options.out_option(compare, "also save the run (tables, CSV, samples, manifest) here")
    cli_options.force_option(compare)
    cli_profiler.add_options(compare)

    bench = commands.add_parser("bench", help="a sweep: compare over many shapes and dtypes")
    bench.add_argument("names", nargs="+", help="plugins to time")
    bench_shape = bench.add_mutually_exclusive_group(required=True)
    bench_shape.add_argument(
        "--shape",
        help="comma-separated MxNxK, N (a square) or START:STOP:STEP (squares); each of M, N, "
        "K may be a range START:STOP:STEP or START:STOP:*FACTOR (geometric), the shapes their "
        "cartesian product, e.g. 256:1024:256,2048 or 1024:4096:1024x4096x512:8192:*2",
    )
    cli_options.shapes_option(bench_shape, "the shapes, one row each, with weights")
    bench.add_argument("--dtype", default="fp32", help="comma-separated dtypes")
    bench.add_argument("--layout", default=None, help="comma-separated layouts (default: rowmajor)")
    cli_options.fp8_options(bench, many=False)
    cli_options.batch_options(bench, many=False)
    cli_options.group_options(bench, many=False)
    cli_options.add_timing_options(bench)
    cli_options.devices_option(
        bench, "each point on one of them, every point on each model", ray=True
    )
    cli_profiler.add_options(bench)
    cli_options.format_option(bench)
    cli_options.out_option(bench, "save the run here (default: a new runs/bench-<time>-<random>)")
    cli_options.force_option(bench)

    report = commands.add_parser(
        "report", help="render a saved run, compare two runs, or trend many"
    )
    report.add_argument(
        "runs",
        nargs="+",
        type=opt.path("run"),
        help="RUN, BEFORE AFTER, or three or more runs: a history",
    )
    report.add_argument(
        "--threshold",
        type=opt.number("--threshold", 0.0, opt.MAX_THRESHOLD_PCT),
        default=None,
        help="percent slowdown that counts as a regression, 0 to "
        f"{opt.MAX_THRESHOLD_PCT:g} (default {regression.DEFAULT_THRESHOLD_PCT:g})",
    )
    cli_options.format_option(report)
    report.add_argument(
        "--plot",
        type=opt.path("--plot"),
        help="write TFLOP/s, roofline and speedup plots here, or a history's trend (needs matplotlib)",
    )
    cli_plot_options.add_options(report)
    report.add_argument(
        "--verdicts",
        action="store_true",
        help="only the verdicts, one line per point and pair",
    )
    report.add_argument(
        "--regimes",
        action="store_true",
        help="each pair's word in every timing regime (end to end, graph replay, "
        "device kernels), one line per point and pair; one run only",
    )
    report.add_argument(
        "--parts",
        action="store_true",
        help="the runs are parts of one sweep (split across commands or machines): one "
        "table, verdict list and weighted mean over all their points",
    )
    report.add_argument(
        "--accept-edited",
        action="store_true",
        help="read a run whose content does not match its checksum (edited or damaged "
        "since it was saved) with a warning, instead of refusing it",
    )
    report.add_argument(
        "--margin",
        type=opt.number("--margin", 0.0, cli_options.MAX_MARGIN_PCT, low_open=True),
        default=None,
        help="judge the saved run again from its recorded processes, with this "
        f"equivalence margin in percent (above 0 up to {cli_options.MAX_MARGIN_PCT:g}) and "
        "today's rules; one run only",
    )
    return parser


COMMANDS = {
    "list": cmd_list,
    "check": cmd_check,
    "compare": cmd_compare,
    "bench": cmd_bench,
    "report": cmd_report,
}


def run() -> None:
    """The ``gemmreg`` command: :func:`main`, then a quick exit
    (:mod:`gemmreg.workers.quick_exit`) once every result is written."""
    quick_exit.leave(main())


def main(argv: Sequence[str] | None = None) -> int:
    from gemmreg.discovery import interrupts

    interrupts.install_termination_handlers()
    try:
        args = build_parser().parse_args(argv)
        cli_device.choose(args)  # before torch is imported, here or in a worker
        cli_plot_options.apply(args)
        if args.command in ("check", "compare", "bench"):
            from gemmreg.workers import temp_folders

            temp_folders.sweep_orphans()  # what killed runs left in the temporary directory
        code = COMMANDS[args.command](args)
        terminated = interrupts.termination_signal()  # a command that kept partial results
        if terminated:
            print(f"gemmreg: {interrupts.Terminated(terminated)}; workers killed", file=sys.stderr)
            return 128 + terminated
        return code
    except UsageError as error:  # an unknown plugin's name among them
        message = str(error.args[0] if error.args else error)
        print(f"gemmreg: error: {' '.join(message.splitlines())}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as error:
        if isinstance(error, interrupts.Terminated):
            print(f"gemmreg: {error}; workers killed", file=sys.stderr)
            return 128 + error.signum
        print("gemmreg: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except RunNotSaved as error:  # a save past the sweep's own (compare --out, profilers)
        print(f"gemmreg: {error}; the run on disk is its last save", file=sys.stderr)
        return EXIT_NOT_SAVED
    except Exception as error:
        if os.environ.get("GEMMREG_DEBUG"):
            traceback.print_exc()
        print(
            f"gemmreg: internal error: {type(error).__name__}: {error} "
            "(set GEMMREG_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        run_folder.release_all()  # the run folders this command held
