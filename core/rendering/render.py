"""Rendering: records in, tables and JSON out. Nothing here measures or decides."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from gemmreg.contract.inputs import generator_name
from gemmreg.contract.records import DTYPES, Tolerance
from gemmreg.contract.serialization import document
from gemmreg.contract.serialization import (
    dumps as dumps,  # re-exported: callers write through render
)
from gemmreg.contract.serialization import to_jsonable as to_jsonable
from gemmreg.contract.serialization import write_atomically as write_atomically
from gemmreg.contract.task_kinds import REFUSAL, SANITIZE
from gemmreg.discovery.registry import Registry
from gemmreg.rendering.device_sections import check_devices_line
from gemmreg.running.check_runner import CaseResult
from gemmreg.storage.check_files import CHECK_SCHEMA
from tabulate import tabulate

TABLE_FORMATS = {"table": "simple", "markdown": "github"}


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}g}"


# ---------------------------------------------------------------------------
# gemmreg list
# ---------------------------------------------------------------------------


def list_rows(registry: Registry) -> list[dict[str, Any]]:
    rows = []
    for name in sorted(registry.kernels):
        kernel = registry.kernels[name]
        spec = kernel.spec
        caps = spec.capabilities
        reason = kernel.unavailable
        rows.append(
            {
                "name": name,
                "package": kernel.origin.package or kernel.origin.module,
                "plugin": kernel.origin.plugin,
                "summary": spec.summary,
                "backends": sorted(caps.backends),
                "dtypes": sorted(caps.dtypes),
                "layouts": sorted(caps.layouts),
                "precision": {d: str(p) for d, p in sorted(caps.precision.items())},
                "tolerance": {
                    d: {"rtol": t.rtol, "atol": t.atol, "why": t.why}
                    for d, t in sorted(spec.tolerances.items())
                },
                "input_generator": generator_name(spec),
                "available": reason is None,
                "unavailable_reason": reason or "",
                "output": registry.output.get(kernel.origin.plugin, ""),
            }
        )
    for issue in registry.issues:
        rows.append(
            {
                "name": issue.origin.plugin,
                "package": issue.origin.package or issue.origin.module,
                "plugin": issue.origin.plugin,
                "available": False,
                "broken": issue.stage,
                "unavailable_reason": f"{issue.stage}: {issue.reason}",
                "output": registry.output.get(issue.origin.plugin, ""),
            }
        )
    return rows


def list_table(registry: Registry, fmt: str) -> str:
    if fmt == "json":
        return dumps(list_rows(registry))
    table = []
    for row in list_rows(registry):
        if "broken" in row:
            status = "BLOCKED" if row["broken"] == "blocked" else "BROKEN"
            table.append(
                [
                    row["name"],
                    row["package"],
                    "",
                    "",
                    "",
                    f"{status}: {row['unavailable_reason']}",
                    "",
                ]
            )
            continue
        precision = "\n".join(f"{d}: {p}" for d, p in row["precision"].items())
        tolerance = "\n".join(
            f"{d}: rtol {t['rtol']:g}" + (f" atol {t['atol']:g}" if t["atol"] else "")
            for d, t in row["tolerance"].items()
        )
        available = "yes" if row["available"] else f"no: {row['unavailable_reason']}"
        table.append(
            [
                row["name"],
                row["package"],
                ", ".join(row["backends"]),
                ", ".join(row["dtypes"]),
                precision,
                available,
                tolerance,
            ]
        )
    headers = [
        "plugin",
        "package",
        "backends",
        "dtypes",
        "precision",
        "available here",
        "tolerance",
    ]
    return tabulate(
        table,
        headers=headers,
        tablefmt=TABLE_FORMATS[fmt],
        maxcolwidths=[None, None, 12, 14, 44, 40, 28],
    )


# ---------------------------------------------------------------------------
# gemmreg check
# ---------------------------------------------------------------------------


def check_counts(results: Sequence[CaseResult]) -> dict[str, int]:
    counts = {"pass": 0, "fail": 0, "skip": 0, "error": 0, "crashed": 0, "timeout": 0}
    for result in results:
        counts[result.status] += 1
    return counts


def check_table(results: Sequence[CaseResult], fmt: str) -> str:
    if fmt == "json":
        return document(CHECK_SCHEMA, {"counts": check_counts(results), "cases": results})
    table = []
    skipped: dict[tuple[str, str], int] = {}
    dtype_order = {d: i for i, d in enumerate(DTYPES)}
    results = sorted(
        results,
        key=lambda r: (
            r.kernel,
            r.kind,
            dtype_order.get(r.problem.dtype, 9),
            r.problem.layout,
            r.problem.m * r.problem.n * r.problem.k,
        ),
    )
    sanitized = any(r.kind == SANITIZE for r in results)
    for result in results:
        if result.status == "skip":  # one row per kernel and reason, not per case
            key = (result.kernel, result.reason)
            skipped[key] = skipped.get(key, 0) + 1
            continue
        comparison = result.comparison or {}
        row = [
            result.kernel,
            result.id.removeprefix(result.kernel + "-"),
            result.status.upper() if result.status != "pass" else "pass",
            _fmt(comparison.get("max_error"), 3) + tolerance_note(result.tolerance),
        ]
        if sanitized:
            row.append(result.sanitizer.describe() if result.sanitizer is not None else "-")
        table.append([*row, case_detail(result)])
    for (kernel, reason), count in skipped.items():
        row = [kernel, f"{count} case{'s' * (count != 1)}", "SKIP", "-"]
        table.append([*row, "-", reason] if sanitized else [*row, reason])
    headers = ["plugin", "case", "status", "max err", "detail"]
    widths: list[int | None] = [None, None, None, None, 70]
    if sanitized:
        headers.insert(4, "sanitizer")
        widths = [None, None, None, None, 60, 50]
    counts = check_counts(results)
    summary = ", ".join(
        f"{n} {status}" for status, n in counts.items() if n or status in ("pass", "fail")
    )
    return (
        tabulate(
            table,
            headers=headers,
            tablefmt=TABLE_FORMATS[fmt],
            maxcolwidths=widths,
        )
        + f"\n\n{summary}"
        + check_devices_line(results)
        + "".join(f"\n{'- ' * (fmt == 'markdown')}{line}" for line in tolerance_reasons(results))
    )


PARTIAL_CHECK_BANNER = "[PARTIAL: check interrupted; only the cases below finished]"


def check_output(results: Sequence[Any], fmt: str, interrupted: bool) -> str:
    """The check table, marked partial after Ctrl-C (a ``partial`` key in JSON)."""
    text = check_table(results, fmt)
    if fmt == "json":
        return dumps({"partial": interrupted, **json.loads(text)})
    return f"{PARTIAL_CHECK_BANNER}\n\n{text}" if interrupted else text


def tolerance_note(tolerance: Tolerance | None) -> str:
    """`` (tol 0.125)`` after an error: the bound it was held to (its rtol, in
    the error's own units of |A|@|B|, plus any absolute part)."""
    if tolerance is None:
        return ""
    absolute = f" + {tolerance.atol:.3g} abs" if tolerance.atol else ""
    return f" (tol {tolerance.rtol:.3g}{absolute})"


def tolerance_reasons(results: Sequence[CaseResult]) -> list[str]:
    """Why each tolerance that says why is what it is: once per plugin and dtype."""
    reasons = {(r.kernel, r.problem.dtype): t.why for r in results if (t := r.tolerance) and t.why}
    return [f"tolerance {kernel} {dtype}: {why}" for (kernel, dtype), why in reasons.items()]


def sanitize_summary(results: Sequence[CaseResult], fmt: str) -> str:
    """One row per plugin and check (the plain value matrix, then each tool):
    how many cases ran, passed and failed, and why they failed. It answers the
    sanitizer pass's question at a glance: did a tool see what values did not?"""
    from collections import Counter

    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for r in results:
        if r.status == "skip" or r.kind == REFUSAL:
            continue
        check = r.tool if r.kind == SANITIZE else "values (no sanitizer)"
        groups.setdefault((r.kernel, check), []).append(r)
    table = []
    for (kernel, check), rows in groups.items():
        failed = [r for r in rows if r.status != "pass"]
        reported = [r for r in failed if r.sanitizer is not None and r.sanitizer.failed]
        kinds: Counter[str] = Counter()
        for r in reported:
            assert r.sanitizer is not None and r.sanitizer.report is not None
            kinds.update(  # each kind once per case
                {f"{f.kind} in {f.kernel}" for f in r.sanitizer.report.findings if f.fails}
            )
        values_only = [
            r for r in failed if r not in reported and r.comparison and not r.comparison["passed"]
        ]
        why = [f"{kind} ({n} case{'s' * (n != 1)})" for kind, n in kinds.items()]
        if values_only:
            why.append(f"wrong values ({len(values_only)} case{'s' * (len(values_only) != 1)})")
        other = len(failed) - len(reported) - len(values_only)
        if other:
            why.append(f"error or crash ({other})")
        table.append(
            [kernel, check, len(rows), len(rows) - len(failed), len(failed), "; ".join(why)]
        )
    headers = ["plugin", "check", "cases", "pass", "fail", "why they failed"]
    return tabulate(
        table,
        headers=headers,
        tablefmt=TABLE_FORMATS.get(fmt, "simple"),
        maxcolwidths=[None, None, None, None, None, 70],
    )


def case_detail(result: CaseResult) -> str:
    """One line of evidence for a case: the reason and the first bad elements."""
    comparison = result.comparison or {}
    if result.kind == REFUSAL:
        return result.reason.strip().splitlines()[0] if result.reason.strip() else result.status
    if result.kind == SANITIZE and comparison:
        # The sanitizer's own verdict has its column: this one is the values'.
        if comparison.get("passed"):
            return f"values: {comparison.get('total', '?')} elements within tolerance"
        return f"values: {comparison.get('reason', '')}" + _first_bad(comparison)
    if result.status == "pass":
        return f"{comparison.get('total', '?')} elements within tolerance"
    text = result.reason.strip().splitlines()[0] if result.reason.strip() else result.status
    return text + _first_bad(comparison)


def _first_bad(comparison: dict[str, Any]) -> str:
    bad = comparison.get("first_bad") or ()
    if not bad:
        return ""
    shown = "; ".join(f"[{i},{j}] got {g:.6g} want {w:.6g}" for i, j, g, w in bad[:3])
    return f"; first bad: {shown}"
