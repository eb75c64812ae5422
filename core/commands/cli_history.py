"""``gemmreg report RUN1 RUN2 RUN3 ...`` (three or more saved runs): the trend
table (and ``--plot``: the trend picture), each device model apart, each step
judged as ``report BEFORE AFTER`` judges (:mod:`gemmreg.reporting.history`).

Exit 1 when the newest run of any point is a regression against the run
before it, is partial (no verdict), or has no timing of a kernel the run
before it timed; 0 otherwise; 2 on a run that cannot be
read, or an option that needs one run (``--margin``, ``--verdicts``,
``--regimes``)."""

from __future__ import annotations

import argparse
import math

from gemmreg.commands import document_output
from gemmreg.commands.cli_common import EXIT_FAILURE, EXIT_OK, _progress
from gemmreg.contract import options as opt
from gemmreg.contract.options import UsageError


def report_history(args: argparse.Namespace) -> int:
    from gemmreg.reporting import history, regression, render_history, runs

    one_run = (
        ("--margin", args.margin is not None),
        ("--sweep-wide", args.sweep_wide),
        ("--fail-on", bool(args.fail_on)),
        ("--verdicts", args.verdicts),
        ("--regimes", args.regimes),
        ("--kernels", args.kernels),
    )
    for option, given in one_run:
        if given:
            raise UsageError(f"report {option} takes one run, not a history of {len(args.runs)}")
    threshold = regression.DEFAULT_THRESHOLD_PCT if args.threshold is None else args.threshold
    if not (math.isfinite(threshold) and threshold >= 0):
        raise UsageError(f"--threshold must be a finite percent >= 0, got {args.threshold}")
    if len(set(args.runs)) != len(args.runs):
        raise UsageError("report names a run twice")
    loaded = []
    notes: list[str] = []  # said once every run reads: a refusal stays one line
    for path in args.runs:
        try:
            manifest, reports, partial = runs.load_run(path, not args.accept_edited, notes.append)
        except runs.RunError as error:
            raise UsageError(str(error)) from None
        loaded.append(history.run_info(str(path), manifest, reports, partial))
    for note in notes:
        _progress(note)
    if args.plot is not None:
        import importlib.util

        from gemmreg.reporting import plots_history

        if importlib.util.find_spec("matplotlib") is None:
            raise UsageError("--plot needs matplotlib: pip install 'gemmreg[plot]'")
        opt.writable_directory(args.plot, "--plot")
    trends = history.trends(loaded, threshold)
    devices = history.by_device(loaded)
    _progress(
        f"history of {len(loaded)} runs on {len(devices)} device model(s): "
        + "; ".join(f"{d}: {len(r)} run(s)" for d, r in devices.items())
    )
    document_output.emit(render_history.history_table(trends, args.format, threshold))
    if args.plot is not None:
        written = plots_history.write_history_plots(args.plot, trends)
        _progress(f"plots written: {', '.join(str(p) for p in written)}")
    newest = [t.points[-1].change for t in trends if t.points and t.points[-1].change]
    unjudged = [c for c in newest if c.verdict == "no verdict" and "partial" in c.explanation]
    if unjudged:
        _progress(f"gemmreg: {len(unjudged)} point(s) are partial in their newest run: no verdict")
    lost = regression.lost_timing(newest)
    if lost:
        _progress(f"gemmreg: timed before, no timing in their newest run: {'; '.join(lost)}")
    return EXIT_FAILURE if history.latest_regressions(trends) or unjudged or lost else EXIT_OK
