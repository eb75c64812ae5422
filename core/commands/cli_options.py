"""The options several commands share, each defined once (``--format``,
``--out``, ``--seed``, ``--strict``, ``--shapes``, ``--devices``/``--device``/``--ray``
and the timing options),
with help text generated from the constants that set their defaults and
bounds, so ``--help`` cannot drift from what the code does. The options that
say what kind of problem (fp8, batch, groups): :mod:`gemmreg.commands.cli_problem_options`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from gemmreg.contract import options as opt

MAX_MARGIN_PCT = opt.MAX_MARGIN_PCT
"""Re-exported: its home is :mod:`gemmreg.contract.options`, beside the other bounds."""


def seed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed",
        type=opt.integer("--seed", 0, opt.MAX_SEED),
        default=None,
        help=f"0 to {opt.MAX_SEED}",
    )


def format_option(parser: argparse.ArgumentParser) -> None:
    """``--format``, the same for every command that prints rows
    (:data:`gemmreg.reporting.formats.FORMATS`)."""
    from gemmreg.reporting.formats import FORMATS

    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=FORMATS[0],
        help="table (terminal), markdown (never wrapped: for pages and CI step summaries), "
        "csv (figures as numbers) or json (with its schema and kind; docs/formats.md)",
    )


def out_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--out", type=opt.path("--out"), help=f"{help} (checked before any work)")


def force_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace the run already in --out (its run.json or check.json, manifest, tables, "
        "profiles and sanitizer logs are removed first; other files stay); never one that a "
        "live run is writing",
    )


def shapes_option(group: Any, what: str) -> None:
    group.add_argument(
        "--shapes",
        type=opt.path("--shapes", "a file"),
        metavar="FILE",
        help=f"YAML, JSON or CSV rows of m, n, k and optional dtype, layout, weight: {what} "
        "(see docs/cli.md and examples/shapes/)",
    )


def ray_address(text: str) -> str:
    """``--ray``'s address, never empty: ``--ray ''`` (an unset variable
    in a script) would otherwise mean no Ray, or $GEMMREG_RAY_ADDRESS's."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: name a Ray address ('local' starts one here)")
    return text


ray_address.__name__ = "--ray"


def devices_option(parser: argparse.ArgumentParser, unit: str, ray: bool = False) -> None:
    """``--devices`` and its shorthand ``--device N`` (one GPU; both given are
    refused: :mod:`gemmreg.workers.device_choice`), and ``--ray`` where the
    command can run on a cluster (docs/multi-gpu.md)."""
    from gemmreg.workers.device_choice import MAX_DEVICE_INDEX

    if ray:
        parser.add_argument(
            "--ray",
            type=ray_address,
            metavar="ADDRESS",
            help="run on a Ray cluster, a GPU per task ('local': start one here; "
            "default: $GEMMREG_RAY_ADDRESS; docs/multi-gpu.md)",
        )
    parser.add_argument(
        "--devices",
        metavar="all|0,1,...",
        help=f"spread the work over these GPUs, one worker per GPU pinned to it, {unit} "
        "(docs/multi-gpu.md); one index pins the whole run to that GPU, as --device does",
    )
    parser.add_argument(
        "--device",
        type=opt.integer("--device", 0, MAX_DEVICE_INDEX),
        default=None,
        metavar="N",
        help="short for --devices N: the one GPU to run on, counted as CUDA (or ROCm) numbers "
        "those visible (default: device 0); every worker gets CUDA_VISIBLE_DEVICES and "
        "HIP_VISIBLE_DEVICES narrowed to it, and the manifest records them",
    )


def strict_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--strict",
        action="store_true",
        help=f"exit 1 when {what} an unavailable plugin, or any installed plugin "
        "failed to load (BROKEN), named or not",
    )


TIMEOUT_HELP = (
    "seconds one worker task (a case, or one process's timing of a plugin) may take "
    f"before it is called hung and its worker killed, above 0 up to {opt.MAX_TIMEOUT_S:g} "
    "(default: scaled to the problem's 2*M*N*K; see gemmreg.workers.timeouts)"
)


def timeout_type() -> Callable[[str], float]:
    """``--timeout``'s parser: a finite ASCII number of seconds, bounded."""
    return opt.number("--timeout", 0.0, opt.MAX_TIMEOUT_S, low_open=True)


def percent(fraction: float) -> str:
    """``0.005`` as ``0.5%%``: argparse formats help with ``%``."""
    return f"{fraction:.1%}".replace("%", "%%")


def fail_on_option(parser: argparse.ArgumentParser, more: str = "") -> None:
    """``--fail-on``: the verdicts as a CI gate (:mod:`gemmreg.commands.gates`)."""
    from gemmreg.commands import gates

    parser.add_argument(
        "--fail-on",
        type=gates.parse,
        default=(),
        dest="fail_on",
        metavar="slower|not-faster|invalid",
        help="exit 1, with one line naming the pairs, where a pair is judged SLOWER "
        "(slower), anything but FASTER (not-faster) or INVALID (invalid); comma-separated "
        "for several. Pairs as the tables list them: each plugin against each named before it"
        + more,
    )


def add_timing_options(parser: argparse.ArgumentParser) -> None:
    # The defaults quoted are read from the constants that set them.
    from gemmreg.timing import rounds, sequential, stats
    from gemmreg.timing import timing_options as defaults

    gpu = defaults.GPU_POLICY
    parser.add_argument("--timeout", type=timeout_type(), default=None, help=TIMEOUT_HELP)
    fail_on_option(parser)
    parser.add_argument(
        "--processes",
        type=opt.integer("--processes", 1, opt.MAX_PROCESSES),
        default=None,
        help=f"a fixed number of independent worker processes, 1 to {opt.MAX_PROCESSES}, "
        "judged once, as runs without --budget were (default: as many as --budget needs on "
        f"a GPU; {defaults.CPU_DEFAULT_PROCESSES} on the CPU; {defaults.GPU_DEFAULT_PROCESSES} "
        "with compare --ray)",
    )
    parser.add_argument(
        "--budget",
        type=opt.number("--budget", 0.0, opt.MAX_BUDGET_S),
        default=None,
        dest="budget",
        help="seconds of timed processes a point may spend: after a first batch of "
        f"{sequential.FIRST_BATCH} processes, batches are added (each as large as what "
        "ran, while it fits) until every pair is decided, each look at its own level "
        f"so the error stays at {percent(1 - stats.CONFIDENCE)} over all looks; up to "
        f"{sequential.MAX_PROCESSES} processes; 0: the first batch only (default on a "
        f"GPU: {defaults.GPU_COMPARE_BUDGET_S:g} for compare, {defaults.GPU_DEFAULT_BUDGET_S:g} "
        "a point for bench; on the CPU, none: a fixed "
        f"{defaults.CPU_DEFAULT_PROCESSES}). Not with --processes, which fixes the count",
    )
    parser.add_argument(
        "--device-processes",
        type=opt.integer("--device-processes", 1, opt.MAX_PROCESSES),
        default=None,
        dest="device_processes",
        help="profiling processes (CUPTI) on a GPU, one after another, 1 to "
        f"{opt.MAX_PROCESSES}: from {stats.MIN_PROCESSES} the device-kernel regime gets "
        "an interval and a word, like the timed ones; 1: one process's figure beside "
        f"the verdict (default: {defaults.DEFAULT_DEVICE_PROCESSES})",
    )
    parser.add_argument(
        "--repeats",
        type=opt.integer("--repeats", 1, opt.MAX_REPEATS),
        default=None,
        help=f"fixed number of rounds per process, 1 to {opt.MAX_REPEATS} (default: rounds "
        f"until every pair's paired ratio is known to +-{percent(rounds.TARGET_HALFWIDTH)}, capped)",
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
    parser.add_argument(
        "--l2",
        choices=defaults.L2_STATES,
        default=None,
        help="what the L2 flush before every GPU sample leaves: clean (it reads a buffer of "
        "4x L2) or dirty (it zeroes one, as triton.testing.do_bench does: each call then "
        f"writes back someone else's lines first); default {defaults.DEFAULT_L2}. "
        "Both evict A, B and C (docs/timing.md)",
    )
    seed_option(parser)
