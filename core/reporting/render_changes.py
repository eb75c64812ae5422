"""Rendering of ``report BEFORE AFTER``: one row per kernel and problem in
both runs, with the change, its interval and its verdict, a section per
device model where the runs share several, and the points left unpaired
(on a model the other run lacks); records in, text out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gemmreg.contract.numbers import significant, span
from gemmreg.reporting import formats
from gemmreg.reporting.device_pairing import Unpaired
from gemmreg.reporting.device_sections import section_heading
from gemmreg.reporting.formats import Cell, Document
from gemmreg.reporting.regression import Change
from gemmreg.reporting.setup_changes import setup_notes, setup_of
from gemmreg.timing import stats
from gemmreg.timing.timing_records import KernelSummary

CHANGES_SCHEMA = 1
"""The layout of ``report BEFORE AFTER --format json``: ``threshold_pct``,
``changes``, one record per kernel and problem in both runs (each with its
``device``), and ``unpaired``, the points of a device model one run lacks."""
CHANGE_COLUMNS = (
    "problem",
    "kernel",
    "before_ms",
    "before_low_ms",
    "before_high_ms",
    "after_ms",
    "after_low_ms",
    "after_high_ms",
    "change_pct",
    "change_low_pct",
    "change_high_pct",
    "verdict",
    "regression",
    "device_name",
    "notes",
)
"""One CSV row per change: each run's median and range over its processes,
and the change in percent of time with its interval, as numbers."""


def _figures(run: str, s: KernelSummary) -> dict[str, Cell]:
    """A run's median and range as the CSV's columns (``before_ms``, ...)."""
    return {f"{run}_ms": s.center_ms, f"{run}_low_ms": s.low_ms, f"{run}_high_ms": s.high_ms}


def change_rows(changes: Sequence[Change]) -> list[dict[str, Cell]]:
    rows = []
    for c in changes:
        low, high = c.interval_pct or (None, None)
        rows.append(
            {
                "problem": c.problem,
                "kernel": c.kernel,
                **_figures("before", c.before),
                **_figures("after", c.after),
                "change_pct": c.change_pct,
                "change_low_pct": low,
                "change_high_pct": high,
                "verdict": c.verdict,
                "regression": c.regression,
                "device_name": c.device,
                "notes": "; ".join(c.notes),
            }
        )
    return rows


def unpaired_lines(unpaired: Sequence[Unpaired]) -> list[str]:
    """One line per point left out: its run, point, model and why."""
    return [f"unpaired: {u.run} {u.problem} on {u.device}: {u.reason}" for u in unpaired]


def _rows(changes: Sequence[Change]) -> list[list[str]]:
    def median_and_range(s: KernelSummary) -> str:
        if not s.center_ms or s.low_ms is None or s.high_ms is None:
            return str(s.status)
        return f"{significant(s.center_ms, 5)} ({span(s.low_ms, s.high_ms)})"

    rows = []
    for c in changes:
        change = f"{c.change_pct:+.2f}%" if c.change_pct is not None else "-"
        if c.interval_pct:
            change += f" ({c.interval_pct[0]:+.2f}% to {c.interval_pct[1]:+.2f}%)"
        verdict = c.verdict.upper() + (" REGRESSION" if c.regression else "")
        rows.append(
            [
                c.problem,
                c.kernel,
                median_and_range(c.before),
                median_and_range(c.after),
                change,
                verdict,
            ]
        )
    return rows


HEADERS = ["problem", "plugin", "before ms (range)", "after ms (range)", "time change", "verdict"]


def changes_table(
    changes: Sequence[Change],
    fmt: str,
    before_manifest: Mapping[str, object],
    after_manifest: Mapping[str, object],
    threshold_pct: float,
    unpaired: Sequence[Unpaired] = (),
) -> str:
    """The changes in ``fmt``; a document of rows holds the changes alone
    (the command says the unpaired points on stderr)."""
    formatter = formats.get(fmt)
    document = formatter.document(
        Document(
            kind="changes",
            schema=CHANGES_SCHEMA,
            records=lambda: {
                "threshold_pct": threshold_pct,
                "changes": list(changes),
                "unpaired": list(unpaired),
            },
            rows=lambda: change_rows(changes),
            columns=CHANGE_COLUMNS,
        )
    )
    if document is not None:
        return document
    lines = [
        f"note: {key} differs: {before_manifest.get(key)} -> {after_manifest.get(key)}"
        for key in ("device_name", "git")
        if before_manifest.get(key) != after_manifest.get(key)
    ]
    run_wide = setup_notes(setup_of(before_manifest), setup_of(after_manifest))
    lines += [f"note: {note}" for note in run_wide]  # once here, not once per change
    models = list(dict.fromkeys(c.device for c in changes))
    if len(models) > 1:  # a section per model: never two models' figures in one table
        tables = []
        for model in models:
            group = [c for c in changes if c.device == model]
            points = len({c.problem for c in group})
            heading = section_heading(model, points, formatter)
            tables.append(f"{heading}\n{formatter.table(_rows(group), HEADERS)}")
        table = "\n\n".join(tables)
    else:
        table = formatter.table(_rows(changes), HEADERS)
    warnings = []
    for c in changes:
        if c.verdict in ("noisy", "no verdict"):
            warnings.append(f"warning: {c.problem} {c.kernel}: {c.explanation}")
        warnings.extend(
            f"note: {c.problem} {c.kernel}: {note}" for note in c.notes if note not in run_wide
        )
    warnings += unpaired_lines(unpaired)
    # In markdown a line touching a table is read as one of its rows: blank lines around it.
    gap = [""] if formatter.table_apart else []
    lines += [*(gap if lines else []), table, *(gap if warnings else [])]
    lines += warnings
    regressions = sum(c.regression for c in changes)
    lines += [
        "",
        f"{regressions} regression(s) beyond {threshold_pct:g}% (a significant slowdown: the "
        f"Welch interval of the change at {stats.CONFIDENCE:.1%} lies above 0, and its estimate "
        f"exceeds {threshold_pct:g}%)",
    ]
    return "\n".join(lines)
