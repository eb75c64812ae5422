"""The ``gemmreg`` command line's grammar: every command, its options and
their help, as :func:`build_parser` builds them; :mod:`gemmreg.cli` parses
with it and dispatches. A bad option raises :class:`UsageError` (one line,
exit 2), with argparse's guess at what was meant, where argparse would print
its usage and exit by itself."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from gemmreg.commands import (
    argparse_guesses,
    cli_options,
    cli_plot_options,
    cli_problem_options,
    cli_profiler,
)
from gemmreg.contract import options as opt
from gemmreg.contract.options import UsageError
from gemmreg.contract.version import __version__


class _Parser(argparse.ArgumentParser):
    command: str | None = None
    """The command the last parse named: argparse refuses a command's unknown
    option from the top parser, and the guess must come from that command's."""

    def parse_known_args(self, *args: Any, **kwargs: Any) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(*args, **kwargs)
        self.command = getattr(parsed, "command", None)
        return parsed, extras

    def error(self, message: str) -> NoReturn:  # argparse would print usage and exit 2 itself
        raise UsageError(message + argparse_guesses.guess(self, message, self.command))


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
    cli_problem_options.problem_form_options(check, many=True)
    cli_options.seed_option(check)
    check.add_argument(
        "--timeout",
        type=cli_options.timeout_type(),
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
        default=None,
        help="comma-separated dtypes: the pairs judged at each in turn, a verdict per dtype "
        "(default: fp32)",
    )
    compare.add_argument("--layout", default=None, help="one layout (default: rowmajor)")
    cli_problem_options.problem_form_options(compare, many=False)
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
    bench_shape.add_argument(
        "--resume",
        type=opt.path("--resume", "a saved bench run"),
        metavar="RUN",
        help="time the points the saved sweep RUN planned and lacks whole (never started, or "
        "left partial), with RUN's plugins, as a new run (--out); then report --parts RUN OUT",
    )
    bench.add_argument("--dtype", default=None, help="comma-separated dtypes (default: fp32)")
    bench.add_argument("--layout", default=None, help="comma-separated layouts (default: rowmajor)")
    cli_problem_options.problem_form_options(bench, many=False)
    cli_options.add_timing_options(bench)
    bench.add_argument(
        "--sweep-wide",
        action="store_true",
        help="judge the sweep's points together: each point's pairs at the run's level "
        "(99.5%%) Bonferroni-corrected over the points, so that a claim anywhere in the "
        "sweep (never SLOWER, FASTER everywhere) holds at 99.5%%, --fail-on gates at that "
        "level and --budget adds processes until it decides; --resume judges the rest as "
        "the run was judged",
    )
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
        "--kernels",
        action="store_true",
        help="the device kernels each plugin's profiled calls launched (which code was "
        "timed), one line per point and plugin",
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
    report.add_argument(
        "--sweep-wide",
        action="store_true",
        help="judge the saved sweep's verdicts again so that its claims hold at the run's "
        "level (99.5%%) all together, not at each point on its own (Bonferroni over its "
        "points); one run, or its --parts",
    )
    cli_options.fail_on_option(
        report,
        "; as judged here (with --margin, --sweep-wide), of one run or its --parts. A "
        "partial run fails every gate: its missing points have no verdict",
    )
    return parser
