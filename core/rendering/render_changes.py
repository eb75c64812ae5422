"""Rendering of ``report BEFORE AFTER``: one row per kernel and problem in
both runs, with the change, its interval and its verdict; records in, text out.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from gemmreg.judging import stats
from gemmreg.rendering.render import TABLE_FORMATS, dumps
from tabulate import tabulate


def changes_table(
    changes: Sequence[Any],
    fmt: str,
    before_manifest: dict[str, Any],
    after_manifest: dict[str, Any],
    threshold_pct: float,
) -> str:
    if fmt == "json":
        return dumps({"threshold_pct": threshold_pct, "changes": list(changes)})
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            [
                "problem",
                "kernel",
                "before_ms",
                "after_ms",
                "change_pct",
                "change_low_pct",
                "change_high_pct",
                "verdict",
                "regression",
            ]
        )
        for c in changes:
            low, high = c.interval_pct or (None, None)
            writer.writerow(
                [
                    c.problem,
                    c.kernel,
                    c.before.center_ms,
                    c.after.center_ms,
                    c.change_pct,
                    low,
                    high,
                    c.verdict,
                    c.regression,
                ]
            )
        return buffer.getvalue().rstrip("\n")

    def span(s: Any) -> str:
        return f"{s.center_ms:.5g} ({s.low_ms:.4g} to {s.high_ms:.4g})" if s.center_ms else s.status

    rows = []
    for c in changes:
        change = f"{c.change_pct:+.2f}%" if c.change_pct is not None else "-"
        if c.interval_pct:
            change += f" ({c.interval_pct[0]:+.2f}% to {c.interval_pct[1]:+.2f}%)"
        verdict = c.verdict.upper() + (" REGRESSION" if c.regression else "")
        rows.append([c.problem, c.kernel, span(c.before), span(c.after), change, verdict])
    lines = [
        f"note: {key} differs: {before_manifest.get(key)} -> {after_manifest.get(key)}"
        for key in ("device_name", "torch", "triton", "git")
        if before_manifest.get(key) != after_manifest.get(key)
    ]
    headers = [
        "problem",
        "plugin",
        "before ms (range)",
        "after ms (range)",
        "time change",
        "verdict",
    ]
    lines.append(tabulate(rows, headers=headers, tablefmt=TABLE_FORMATS[fmt]))
    for c in changes:
        if c.verdict in ("noisy", "no verdict"):
            lines.append(f"warning: {c.problem} {c.kernel}: {c.explanation}")
        lines.extend(f"note: {c.problem} {c.kernel}: {note}" for note in c.notes)
    regressions = sum(c.regression for c in changes)
    lines += [
        "",
        f"{regressions} regression(s) beyond {threshold_pct:g}% (a significant slowdown: the "
        f"Welch interval of the change at {stats.CONFIDENCE:.1%} lies above 0, and its estimate "
        f"exceeds {threshold_pct:g}%)",
    ]
    return "\n".join(lines)
