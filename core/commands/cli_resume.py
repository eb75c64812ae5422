"""``gemmreg bench PLUGINS --resume RUN --out NEW``: the points a saved sweep
planned and lacks whole, timed as a new run (:mod:`gemmreg.commands.resuming`
says why and what is refused). What only the command line refuses here: an
option that would choose points (the points are RUN's), in one line (exit 2)
before any work.
"""

from __future__ import annotations

import argparse

from gemmreg.commands import cli_points, resuming
from gemmreg.commands.requests import BenchRequest
from gemmreg.contract.options import UsageError

POINT_OPTIONS = (
    ("dtype", "--dtype"),
    ("layout", "--layout"),
    ("out_dtype", "--out-dtype"),
    ("scaling", "--scaling"),
    ("batch", "--batch"),
    ("batch_layout", "--batch-layout"),
    ("groups", "--groups"),
)
"""The options that choose points, which ``--resume`` takes from RUN's plan
(``--shape`` and ``--shapes`` argparse refuses beside it)."""


def bench_request(args: argparse.Namespace) -> tuple[BenchRequest, list[str]]:
    """``bench --resume``'s request, and the lines saying what it times and
    what RUN has (for stderr, once the command's own refusals have passed)."""
    for field, option in POINT_OPTIONS:
        if getattr(args, field) is not None:
            raise UsageError(
                f"bench --resume takes its points from {args.resume}'s plan: "
                f"{option} is not taken with it"
            )
    asked = cli_points.timing_asked(args)
    return resuming.resume_request(
        args.resume, args.names, args.out, args.force, asked, args.sweep_wide
    )
