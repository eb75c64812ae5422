"""The ``gemmreg`` command line: its parser and dispatch (the commands are in
:mod:`gemmreg.interface.cli_check`, :mod:`gemmreg.interface.cli_timing` and :mod:`gemmreg.interface.cli_report`).

Exit codes: 0 success; 1 a check or comparison found a failure (or an INVALID
verdict), ``check`` ran nothing at all, or ``--strict`` found an unavailable or
broken plugin; 2 bad input (unknown plugin, malformed shape, option out of
bounds, unusable path, malformed saved run, fewer than two runnable plugins for
``compare``), checked before any work starts; 3 gemmreg itself went wrong; 130
interrupted (what finished is kept); 143 and 129 ended by SIGTERM and SIGHUP
(workers killed first). Bad input gets one line, never a traceback
(``GEMMREG_DEBUG=1`` shows tracebacks of gemmreg's own errors).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from gemmreg import __version__
from gemmreg.deciding import options as opt
from gemmreg.deciding.options import UsageError, parse_shape, parse_shapes
from gemmreg.interface.cli_check import cmd_check, cmd_list
from gemmreg.interface.cli_common import (
    EXIT_FAILURE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
)
from gemmreg.interface.cli_report import cmd_report
from gemmreg.interface.cli_timing import cmd_bench, cmd_compare
from gemmreg.running import quick_exit

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "build_parser",
    "main",
    "parse_shape",
    "parse_shapes",
]

MAX_MARGIN_PCT = 50.0
"""An equivalence margin wider than this would call a 2x difference "equivalent"."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would print usage and exit 2 itself
        raise UsageError(message)


def _seed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed",
        type=opt.integer("--seed", 0, opt.MAX_SEED),
        default=None,
        help=f"0 to {opt.MAX_SEED}",
    )


def _out_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--out", type=opt.path("--out"), help=f"{help} (checked before any work)")


def _devices_option(parser: argparse.ArgumentParser, unit: str, ray: bool = False) -> None:
    if ray:
        parser.add_argument(
            "--ray",
            metavar="ADDRESS",
            help="run on a Ray cluster, a GPU per task ('local': start one here; "
            "default: $GEMMREG_RAY_ADDRESS; docs/multi-gpu.md)",
        )
    parser.add_argument(
        "--devices",
        metavar="all|0,1,...",
        help=f"spread the work over these GPUs, one worker per GPU pinned to it, {unit} "
        "(docs/multi-gpu.md); one index pins the run to that GPU",
    )


def _strict_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--strict",
        action="store_true",
        help=f"exit 1 when {what} an unavailable plugin or a plugin that failed to load (BROKEN)",
    )


TIMEOUT_HELP = (
    "seconds one worker task (a case, or one process's timing of a plugin) may take "
    "before it is called hung and its worker killed (default: scaled to the problem's "
    "2*M*N*K; see gemmreg.deciding.timeouts)"
)


def _percent(fraction: float) -> str:
    """``0.005`` as ``0.5%%``: argparse formats help with ``%``."""
    return f"{fraction:.1%}".replace("%", "%%")


def _timing_options(parser: argparse.ArgumentParser) -> None:
    # The defaults quoted are read from the constants that set them.
    from gemmreg.deciding import timing_options as defaults
    from gemmreg.judging import rounds, stats

    gpu = defaults.GPU_POLICY
    parser.add_argument("--timeout", type=float, default=None, help=TIMEOUT_HELP)
    parser.add_argument(
        "--processes",
        type=opt.integer("--processes", 1, opt.MAX_PROCESSES),
        default=None,
        help=f"independent worker processes, 1 to {opt.MAX_PROCESSES} (default: "
        f"{defaults.GPU_DEFAULT_PROCESSES} on a GPU, {defaults.CPU_DEFAULT_PROCESSES} on the CPU)",
    )
    parser.add_argument(
        "--repeats",
        type=opt.integer("--repeats", 1, opt.MAX_REPEATS),
        default=None,
        help=f"fixed number of rounds per process, 1 to {opt.MAX_REPEATS} (default: rounds "
        f"until every pair's paired ratio is known to +-{_percent(rounds.TARGET_HALFWIDTH)}, capped)",
    )
    parser.add_argument(
        "--warmup",
        type=opt.integer("--warmup", 0, opt.MAX_WARMUP),
        default=None,
        help=f"minimum heat-soak calls per plugin, 0 to {opt.MAX_WARMUP} (default: >= "
        f"{gpu.soak_min_calls} calls, >= {gpu.soak_min_s:g} s and a steady SM clock on a GPU)",
    )
    parser.add_argument(
        "--max-time",
        type=opt.number("--max-time", 0.0, opt.MAX_TIME_S, low_open=True),
        default=None,
        dest="max_time",
        help=f"cap on the seconds of rounds per process, above 0 up to {opt.MAX_TIME_S:g} "
        f"(default: {gpu.stop.max_time_s:g} on a GPU; bench: {defaults.BENCH_MAX_TIME_S:g})",
    )
    parser.add_argument(
        "--margin",
        type=opt.number("--margin", 0.0, MAX_MARGIN_PCT, low_open=True),
        default=None,
        help="equivalence margin in percent: an interval inside +-MARGIN%% is EQUIVALENT "
        f"(above 0 up to {MAX_MARGIN_PCT:g}; default {100 * stats.DEFAULT_MARGIN:g})",
    )
    _seed_option(parser)


def build_parser() -> argparse.ArgumentParser:
    from gemmreg.deciding import sanitizer_tools, timing_options
    from gemmreg.judging import regression

    parser = _Parser(prog="gemmreg", description="A plugin registry for GEMM kernels (C = A @ B).")
    parser.add_argument("--version", action="version", version=f"gemmreg {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    listing = commands.add_parser(
        "list", help="every plugin, where it came from, and whether it runs here"
    )
    listing.add_argument("--format", choices=["table", "markdown", "json"], default="table")
    _strict_option(listing, "it lists")

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
    _seed_option(check)
    check.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=TIMEOUT_HELP.replace("(a case, or one process's timing of a plugin)", "(a case)")
        + "; after a plugin's first timeout its remaining cases are skipped",
    )
    check.add_argument("--format", choices=["table", "markdown", "json"], default="table")
    _out_option(check, "also write the table, JSON and manifest into this directory")
    _strict_option(check, "it checks")
    _devices_option(check, "each plugin's cases on one of them", ray=True)
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
    compare.add_argument(
        "--shape", help=f"MxNxK (default: {gpu_shape} on a GPU, {cpu_shape} on the CPU)"
    )
    compare.add_argument("--dtype", default="fp32")
    _timing_options(compare)
    compare.add_argument("--format", choices=["table", "markdown", "csv", "json"], default="table")
    _out_option(compare, "also save the run (tables, CSV, samples, manifest) here")
    _devices_option(compare, "its processes spread over GPUs of one model")

    bench = commands.add_parser("bench", help="a sweep: compare over many shapes and dtypes")
    bench.add_argument("names", nargs="+", help="plugins to time")
    bench.add_argument(
        "--shape",
        required=True,
        help="comma-separated MxNxK, N (square) or START:STOP:STEP (squares), e.g. 256:1024:256,2048",
    )
    bench.add_argument("--dtype", default="fp32", help="comma-separated dtypes")
    _timing_options(bench)
    _out_option(bench, "save the run here (default: runs/bench-<time>)")
    _devices_option(bench, "each point on one of them, every point on each model", ray=True)

    report = commands.add_parser("report", help="render a saved run, or compare two runs")
    report.add_argument("runs", nargs="+", type=opt.path("run"), help="RUN, or BEFORE AFTER")
    report.add_argument(
        "--threshold",
        type=opt.number("--threshold", 0.0, opt.MAX_THRESHOLD_PCT),
        default=None,
        help="percent slowdown that counts as a regression, 0 to "
        f"{opt.MAX_THRESHOLD_PCT:g} (default {regression.DEFAULT_THRESHOLD_PCT:g})",
    )
    report.add_argument("--format", choices=["table", "markdown", "csv", "json"], default="table")
    report.add_argument(
        "--plot",
        type=opt.path("--plot"),
        help="write TFLOP/s and roofline plots here (needs matplotlib)",
    )
    report.add_argument(
        "--verdicts",
        action="store_true",
        help="only the verdicts, one line per point and pair (table or markdown)",
    )
    report.add_argument(
        "--margin",
        type=opt.number("--margin", 0.0, MAX_MARGIN_PCT, low_open=True),
        default=None,
        help="judge the saved run again from its recorded processes, with this "
        f"equivalence margin in percent (above 0 up to {MAX_MARGIN_PCT:g}) and "
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
    (:mod:`gemmreg.running.quick_exit`) once every result is written."""
    quick_exit.leave(main())


def main(argv: Sequence[str] | None = None) -> int:
    from gemmreg.discovery import interrupts
    from gemmreg.discovery.registry import UnknownKernelError

    interrupts.install_termination_handlers()
    try:
        args = build_parser().parse_args(argv)
        code = COMMANDS[args.command](args)
        terminated = interrupts.termination_signal()  # a command that kept partial results
        if terminated:
            print(f"gemmreg: {interrupts.Terminated(terminated)}; workers killed", file=sys.stderr)
            return 128 + terminated
        return code
    except (UsageError, UnknownKernelError) as error:
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
    except Exception as error:
        if os.environ.get("GEMMREG_DEBUG"):
            traceback.print_exc()
        print(
            f"gemmreg: internal error: {type(error).__name__}: {error} "
            "(set GEMMREG_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
