"""Rendering of ``report RUN1 RUN2 RUN3 ...``: a section per device model, a
row per (problem, kernel) and run, oldest run first, with the change since the
previous run judged as ``report BEFORE AFTER`` judges it
(:mod:`gemmreg.reporting.history`); records in, text out."""

from __future__ import annotations

from collections.abc import Sequence

from gemmreg.reporting import formats
from gemmreg.reporting.formats import Cell, Document
from gemmreg.reporting.history import Trend, TrendPoint, latest_regressions
from gemmreg.timing import stats

COMMIT_CHARS = 10
"""A commit is shown by its first characters, as ``git log --oneline`` does."""
HISTORY_SCHEMA = 1
"""Version of the ``gemmreg.history`` JSON document (docs/formats.md)."""
CSV_HEADER = (
    "device",
    "problem",
    "plugin",
    "run",
    "commit",
    "timestamp_utc",
    "median_ms",
    "low_ms",
    "high_ms",
    "change_pct",
    "change_low_pct",
    "change_high_pct",
    "verdict",
    "regression",
    "notes",
)


def short_commit(commit: str) -> str:
    head, plus, rest = commit.partition("+")
    return head[:COMMIT_CHARS] + plus + rest


def _figures(point: TrendPoint) -> str:
    s = point.summary
    if s.center_ms is None:
        return s.status
    return f"{s.center_ms:.5g} ({s.low_ms:.4g} to {s.high_ms:.4g})"


def _change(point: TrendPoint) -> tuple[str, str]:
    c = point.change
    if c is None:
        return "-", "first"
    text = f"{c.change_pct:+.2f}%" if c.change_pct is not None else "-"
    if c.interval_pct:
        text += f" ({c.interval_pct[0]:+.2f}% to {c.interval_pct[1]:+.2f}%)"
    return text, c.verdict.upper() + (" REGRESSION" if c.regression else "")


def history_table(history: Sequence[Trend], fmt: str, threshold_pct: float) -> str:
    formatter = formats.get(fmt)
    document = formatter.document(
        Document(
            kind="history",
            schema=HISTORY_SCHEMA,
            records=lambda: {"threshold_pct": threshold_pct, "trends": list(history)},
            rows=lambda: history_rows(history),
            columns=CSV_HEADER,
        )
    )
    if document is not None:
        return document
    lines: list[str] = []
    for device in dict.fromkeys(t.device for t in history):
        rows = []
        for trend in (t for t in history if t.device == device):
            for point in trend.points:
                change, verdict = _change(point)
                rows.append(
                    [
                        trend.problem,
                        trend.kernel,
                        short_commit(point.commit),
                        point.timestamp or "-",
                        _figures(point),
                        change,
                        verdict,
                    ]
                )
        headers = ["problem", "plugin", "commit", "run at (UTC)", "ms (range)", "change", "verdict"]
        lines += [formatter.heading(f"device: {device}"), ""]
        lines += [formatter.table(rows, headers), ""]
    for trend in history:
        for point in trend.points:
            if point.change is not None and point.change.verdict in ("noisy", "no verdict"):
                lines.append(
                    f"warning: {trend.device} {trend.problem} {trend.kernel} at "
                    f"{short_commit(point.commit)}: {point.change.explanation}"
                )
    lines += _note_lines(history)
    failing = latest_regressions(history)
    lines.append(
        f"{len(failing)} regression(s) beyond {threshold_pct:g}% in the newest run of a point "
        f"(each step judged as report BEFORE AFTER: the Welch interval of the change at "
        f"{stats.CONFIDENCE:.1%} lies above 0 and its estimate exceeds {threshold_pct:g}%)"
    )
    return "\n".join(lines)


def _note_lines(history: Sequence[Trend]) -> list[str]:
    """The steps' notes (another card, unlike software, unlike L2 state, ...),
    one line per note and run it leads into: a run-wide difference is one
    line with its count of steps, not one per point."""
    counts: dict[tuple[str, str, str, str], int] = {}
    for trend in history:
        for point in trend.points:
            for note in point.change.notes if point.change is not None else ():
                key = (trend.device, point.run, short_commit(point.commit), note)
                counts[key] = counts.get(key, 0) + 1
    return [
        f"note: {device}, {count} step(s) into {run} ({commit}): {note}"
        for (device, run, commit, note), count in counts.items()
    ]


def history_rows(history: Sequence[Trend]) -> list[dict[str, Cell]]:
    """One flat row per device model, problem, kernel and run, oldest run first."""
    rows: list[dict[str, Cell]] = []
    for trend in history:
        for point in trend.points:
            c, s = point.change, point.summary
            low, high = c.interval_pct if c and c.interval_pct else (None, None)
            values: list[Cell] = [
                trend.device,
                trend.problem,
                trend.kernel,
                point.run,
                point.commit,
                point.timestamp,
                s.center_ms,
                s.low_ms,
                s.high_ms,
                c.change_pct if c else None,
                low,
                high,
                c.verdict if c else "first",
                bool(c and c.regression),
                "; ".join(c.notes) if c else "",
            ]
            rows.append(dict(zip(CSV_HEADER, values, strict=True)))
    return rows
