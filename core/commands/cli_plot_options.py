"""``report``'s options for its pictures: ``--peaks FILE``, the user's peaks
(:mod:`gemmreg.timing.peaks_file`; ``GEMMREG_PEAKS`` is checked here too,
before any work on the commands that use peaks, so a broken file is one line
and exit 2, never a run lost at its end), and ``--baseline`` of the speedup
plot (:mod:`gemmreg.reporting.plots_speedup`)."""

from __future__ import annotations

import argparse
import os

from gemmreg.contract import options as opt
from gemmreg.contract.options import UsageError

COMMANDS_WITH_PEAKS = ("compare", "bench", "report")
"""Where peaks are looked up: "% of peak" and the sanity gate, and the plots."""


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--baseline",
        metavar="KERNEL",
        help="the kernel the --plot speedup picture is over (default: the one most "
        "verdicts were judged against, the first named)",
    )
    parser.add_argument(
        "--peaks",
        type=opt.path("--peaks"),
        metavar="FILE",
        help="peaks (TFLOP/s, TB/s) of your devices, JSON or TOML, before the datasheet "
        "table (the same as GEMMREG_PEAKS=FILE; see gemmreg.timing.peaks_file)",
    )


def apply(args: argparse.Namespace) -> None:
    from gemmreg.timing import peaks_file

    if getattr(args, "peaks", None) is not None:
        os.environ[peaks_file.PEAKS_ENV] = str(args.peaks)
    if args.command in COMMANDS_WITH_PEAKS:
        try:
            peaks_file.user_devices()
        except peaks_file.PeaksFileError as error:
            raise UsageError(str(error)) from None
