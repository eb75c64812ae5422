"""``gemmreg report``: a saved run again (its tables, verdicts, plots, or the
verdicts judged again at another margin), two runs compared for
regressions, or three and more as a history (:mod:`gemmreg.commands.cli_history`)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gemmreg.commands import cli_report_check, document_output
from gemmreg.commands.cli_common import EXIT_FAILURE, EXIT_OK, _error, _progress
from gemmreg.contract import numbers
from gemmreg.contract import options as opt
from gemmreg.contract.options import UsageError

if TYPE_CHECKING:
    from gemmreg.timing.timing_records import CompareReport

VIEWS = (("--verdicts", "verdicts"), ("--regimes", "regimes"), ("--kernels", "kernels"))
"""The options that each show one view of a run's points (one at a time)."""


def cmd_report(args: argparse.Namespace) -> int:
    from gemmreg.fanout import sweeping
    from gemmreg.reporting import (
        device_pairing,
        formats,
        regression,
        render_changes,
        render_compare,
        render_kernels,
        render_regimes,
        run_parts,
        run_plan,
        runs,
        speedup_means,
    )
    from gemmreg.timing import rejudging

    checks = [Path(p) for p in args.runs if cli_report_check.is_saved_check(Path(p))]
    if checks:
        return cli_report_check.report_check(args, checks[0])
    views = [o for o, given in VIEWS if getattr(args, given)]
    if len(views) > 1:
        raise UsageError(f"report {' and '.join(views)} are views of a run: give one")
    if args.parts and len(args.runs) < 2:
        raise UsageError("report --parts joins two or more runs of one sweep; give them all")
    if args.parts and len(set(args.runs)) != len(args.runs):
        raise UsageError("report --parts names a run twice")
    for option, given in ((o, getattr(args, name)) for o, name in VIEWS):
        if given and len(args.runs) == 2 and not args.parts:  # a history refuses them itself
            raise UsageError(f"report {option} takes one run, not BEFORE AFTER")
    for option, given in (("--margin", args.margin is not None), ("--sweep-wide", args.sweep_wide)):
        if given and len(args.runs) == 2 and not args.parts:
            raise UsageError(f"report {option} judges one run again; give one run")
    if args.fail_on and len(args.runs) == 2 and not args.parts:
        raise UsageError(
            "report --fail-on gates one run's verdicts (or its --parts); BEFORE AFTER exits 1 "
            "on a regression itself"
        )
    _refuse_unread(args)
    if len(args.runs) > 2 and not args.parts:
        from gemmreg.commands.cli_history import report_history

        return report_history(args)
    notes: list[str] = []  # said once every run reads: a refusal stays one line
    try:
        loaded = [runs.load_run(path, not args.accept_edited, notes.append) for path in args.runs]
        if args.parts:
            loaded = [run_parts.join_parts([str(p) for p in args.runs], loaded)]
    except runs.RunError as error:
        raise UsageError(str(error)) from None
    points = rejudging.judged_points(loaded[0][1]) if args.sweep_wide else None
    if points is not None and points < 2:
        counted = numbers.counted(points, "judged point")
        raise UsageError(
            f"report --sweep-wide judges a sweep's points together: this run has {counted}, "
            "so it would change nothing; drop it"
        )
    for note in notes:
        _progress(note)
    if args.parts:
        _progress(run_parts.parts_line(loaded[0][0]))
        missing = run_parts.missing_line(loaded[0][0])
        if missing:
            _progress(missing)
    if args.plot is not None:
        import importlib.util

        from gemmreg.reporting import plots, plots_speedup

        if importlib.util.find_spec("matplotlib") is None:
            raise UsageError("--plot needs matplotlib: pip install 'gemmreg[plot]'")
        opt.writable_directory(args.plot, "--plot")
        try:
            written = plots_speedup.write_speedup_plots(args.plot, loaded[-1][1], args.baseline)
        except plots_speedup.NoSuchBaseline as error:
            raise UsageError(str(error)) from None
        written += plots.write_plots(args.plot, loaded[-1][1], loaded[-1][0])
        of = " (of AFTER: BEFORE is in the table only)" if len(loaded) == 2 else ""
        _progress(f"plots written{of}: {', '.join(str(p) for p in written)}")
    if args.margin is not None or args.sweep_wide:
        manifest, reports, partial = loaded[0]
        judged = [rejudging.rejudge(r, _margin(args, r.margin), points) for r in reports]
        loaded = [
            (manifest, [sweeping.flag_shared(r, manifest, _progress) for r in judged], partial)
        ]
        _progress(_rejudged_line(args, reports, points))
    if len(loaded) == 1:
        manifest, reports, partial = loaded[0]
        if partial:
            why = manifest.get("stopped") or "interrupted, killed, or its storage failed"
            _progress(f"gemmreg: PARTIAL run: it stopped before its last point: {why}")
            lacking = (
                "" if args.parts else run_plan.lacking_line(manifest, reports, str(args.runs[0]))
            )
            if lacking:
                _progress(lacking)
        if args.kernels:
            if not render_kernels.profiled(reports):
                _progress(
                    "gemmreg: no call in this run was profiled (a CPU run, no profiler on "
                    "the GPU, or saved before names were kept): no device kernels to list"
                )
            document_output.emit(render_kernels.kernel_table(reports, args.format))
        elif args.regimes:
            document_output.emit(render_regimes.regime_table(reports, args.format))
        elif args.verdicts:
            document_output.emit(render_compare.verdict_table(reports, args.format))
        else:
            document_output.emit(render_compare.run_output(manifest, reports, partial, args.format))
        means = [] if args.regimes or args.kernels else speedup_means.mean_lines(reports)
        if means:
            wide = speedup_means.sweep_wide_command(
                [str(p) for p in args.runs], args.parts, args.margin
            )
            means += speedup_means.sweep_level_lines(reports, wide)
        if means and not formats.get(args.format).document_only:
            document_output.emit("\n" + "\n".join(means))
        elif means:  # csv and json keep stdout to the document
            _progress("\n".join(means))
        return _gate(args, reports, partial)
    threshold = regression.DEFAULT_THRESHOLD_PCT if args.threshold is None else args.threshold
    (before_manifest, before, _), (after_manifest, after, _) = loaded
    if not (math.isfinite(threshold) and threshold >= 0):
        raise UsageError(f"--threshold must be a finite percent >= 0, got {args.threshold}")
    try:
        pairing = device_pairing.pair_runs(
            before_manifest, before, after_manifest, after, threshold
        )
    except device_pairing.NoSharedModel as error:  # NothingShared too
        raise UsageError(str(error)) from None
    changes = pairing.changes
    document_output.emit(
        render_changes.changes_table(
            changes, args.format, before_manifest, after_manifest, threshold, pairing.unpaired
        )
    )
    if pairing.unpaired and formats.get(args.format).writes == "rows":  # said on stderr
        for line in render_changes.unpaired_lines(pairing.unpaired):
            _progress(line)
    unjudged = [c for c in changes if c.verdict == "no verdict" and "partial" in c.explanation]
    if unjudged:
        _progress(f"gemmreg: {len(unjudged)} point(s) are partial in a run: no verdict on them")
    lost = regression.lost_timing(changes)
    if lost:
        _progress(f"gemmreg: timed BEFORE, no timing AFTER: {'; '.join(lost)}")
    return EXIT_FAILURE if any(c.regression for c in changes) or unjudged or lost else EXIT_OK


def _gate(args: argparse.Namespace, reports: Sequence[CompareReport], partial: bool) -> int:
    """``--fail-on`` over the verdicts as judged here: exit 1 with the gate's
    line where a pair fails it, or where the run is partial (its missing
    points were never judged: a gate passes whole runs only)."""
    if not args.fail_on:
        return EXIT_OK
    from gemmreg.commands import gates

    if partial:  # parts joined with a planned point no part timed whole are partial too
        conditions = ",".join(args.fail_on)
        _error(
            f"--fail-on {conditions}: the run is partial: its missing points have no verdict "
            "to gate (bench --resume times them)"
        )
        return EXIT_FAILURE
    line = gates.gate_line(reports, args.fail_on)
    if line:
        _error(line)
        return EXIT_FAILURE
    return EXIT_OK


def _margin(args: argparse.Namespace, saved: float | None) -> float:
    """The margin a run is judged again at: ``--margin``'s, else the run's own."""
    if args.margin is not None:
        return float(args.margin) / 100
    from gemmreg.timing import stats

    return stats.DEFAULT_MARGIN if saved is None else saved


def _rejudged_line(
    args: argparse.Namespace, reports: Sequence[CompareReport], points: int | None
) -> str:
    """What ``--margin`` and ``--sweep-wide`` did, said before the tables."""
    from gemmreg.timing import stats, weighted

    line = "verdicts judged again from the recorded processes"
    if args.margin is not None:
        line += f", margin +-{args.margin:g}%"
    if points is not None:
        asked = weighted.run_level(reports)
        level = stats.CONFIDENCE if asked is None else asked
        each = stats.family_confidence(level, points)
        line += (
            f", at {numbers.level_percent(level)} across the sweep's "
            f"{numbers.counted(points, 'judged point')} together "
            f"({numbers.significant(100 * each, 8)}% at each)"
        )
    return line


def _refuse_unread(args: argparse.Namespace) -> None:
    """The options this report would not read: ``--threshold`` compares two
    runs or more (one run, or parts joined into one, has nothing to compare);
    ``--baseline`` is the speedup picture's and ``--peaks`` the roofline's
    and ``--margin``'s (its vetoes judge a call against the peaks); a
    history's trend picture draws neither."""
    one = len(args.runs) == 1 or args.parts
    if args.threshold is not None and one:
        joined = "parts joined into one run" if args.parts else "one run"
        raise UsageError(
            f"report --threshold compares runs (BEFORE AFTER, or a history): {joined} has "
            "nothing to compare; drop it"
        )
    history = len(args.runs) > 2 and not args.parts
    if args.baseline is not None and (args.plot is None or history):
        raise UsageError(
            "report --baseline is the speedup picture's, which a single run or BEFORE AFTER "
            "with --plot DIR draws; drop it"
        )
    if args.peaks is not None and (args.plot is None or history) and args.margin is None:
        raise UsageError(
            "report --peaks is read by --plot's roofline (of a single run or BEFORE AFTER) and "
            "--margin's vetoes; with neither here, drop it"
        )
