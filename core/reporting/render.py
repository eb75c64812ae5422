"""Rendering: records in, tables and JSON out. Nothing here measures or decides."""

from __future__ import annotations

import math
from collections.abc import Sequence

from gemmreg.checking import check_kinds
from gemmreg.checking.check_runner import CaseResult
from gemmreg.contract.low_precision import is_low_precision
from gemmreg.contract.numbers import significant
from gemmreg.contract.records import ALL_DTYPES, Tolerance
from gemmreg.contract.serialization import (
    dumps as dumps,  # re-exported: callers write through render
)
from gemmreg.contract.serialization import to_jsonable as to_jsonable
from gemmreg.contract.serialization import write_atomically as write_atomically
from gemmreg.reporting import formats
from gemmreg.reporting.check_files import CHECK_SCHEMA
from gemmreg.reporting.device_sections import check_devices_line
from gemmreg.reporting.formats import Cell, Document
from gemmreg.reporting.problem_cells import PROBLEM_COLUMNS, problem_cells

CHECK_CSV_COLUMNS = (
    "kernel",
    "case",
    "kind",
    *PROBLEM_COLUMNS,
    "seed",
    "status",
    "max_error",
    "rtol",
    "atol",
    "tool",
    "sanitizer",
    "detail",
    "device_name",
    "device_index",
)
"""``check --format csv``: one row per case, skipped ones included (the table
folds those into one row per plugin and reason); the error and its bound as numbers;
the GPU a case ran on where the check was spread over several (``--devices``)."""


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else significant(value, digits)


# ---------------------------------------------------------------------------
# gemmreg check
# ---------------------------------------------------------------------------


def check_counts(results: Sequence[CaseResult]) -> dict[str, int]:
    counts = {"pass": 0, "fail": 0, "skip": 0, "error": 0, "crashed": 0, "timeout": 0}
    for result in results:
        counts[result.status] += 1
    return counts


def check_rows(results: Sequence[CaseResult]) -> list[dict[str, Cell]]:
    """The rows of ``check --format csv``, in the order the cases finished."""
    rows: list[dict[str, Cell]] = []
    for r in results:
        tolerance, p = r.tolerance, r.problem
        rows.append(
            {
                "kernel": r.kernel,
                "case": r.id.removeprefix(r.kernel + "-"),
                "kind": r.kind,
                **problem_cells(p),
                "seed": r.case.seed,
                "status": r.status,
                "max_error": r.max_error,
                "rtol": tolerance.rtol if tolerance else None,
                "atol": tolerance.atol if tolerance else None,
                "tool": r.tool,
                "sanitizer": r.sanitizer.describe() if r.sanitizer is not None else "",
                "detail": r.reason if r.status == "skip" else case_detail(r),
                "device_name": r.device_name,
                "device_index": r.device_index,
            }
        )
    return rows


def check_table(
    results: Sequence[CaseResult], fmt: str, interrupted: bool = False, every_case: bool = True
) -> str:
    """The check's cases in ``fmt``; JSON is the document ``check.json`` holds.
    Without ``every_case`` (what ``check`` prints unless ``-v``), the passing
    cases of one plugin, kind and dtype are one row, with the worst error
    among them beside its tolerance; every other case keeps its own row. The
    saved tables, CSV and JSON always hold every case."""
    formatter = formats.get(fmt)
    document = formatter.document(
        Document(
            kind="check",
            schema=CHECK_SCHEMA,
            records=lambda: {
                "partial": interrupted,
                "counts": check_counts(results),
                "cases": results,
            },
            rows=lambda: check_rows(results),
            columns=CHECK_CSV_COLUMNS,
        )
    )
    if document is not None:
        return document
    table = []
    skipped: dict[tuple[str, str], int] = {}
    dtype_order = {d: i for i, d in enumerate(ALL_DTYPES)}
    results = sorted(
        results,
        key=lambda r: (
            r.kernel,
            r.kind,
            dtype_order.get(r.problem.dtype, 9),
            r.problem.number_format,
            r.problem.layout,
            r.problem.m * r.problem.n * r.problem.k,
        ),
    )
    sanitized = any(check_kinds.get(r.kind).under_tool for r in results)
    passed: dict[tuple[str, str, str], list[CaseResult]] = {}
    for result in results:
        if result.status == "skip":  # one row per kernel and reason, not per case
            key = (result.kernel, result.reason)
            skipped[key] = skipped.get(key, 0) + 1
            continue
        noted = check_kinds.get(result.kind).noted(result)  # judged on a second try
        if not every_case and result.status == "pass" and not sanitized and not noted:
            passed.setdefault(
                (result.kernel, result.kind, result.problem.number_format), []
            ).append(result)
            continue
        comparison = result.comparison or {}
        row = [
            result.kernel,
            result.id.removeprefix(result.kernel + "-"),
            result.status.upper() if result.status != "pass" else "pass",
            _fmt(comparison.get("max_error"), 3)
            + tolerance_note(result.tolerance, comparison.get("tolerance_used")),
        ]
        if sanitized:
            row.append(result.sanitizer.describe() if result.sanitizer is not None else "-")
        table.append([*row, case_detail(result)])
    for (kernel, kind, dtype), group in passed.items():
        table.append(_passed_row(kernel, kind, dtype, group))
    table.sort(key=lambda row: row[0])  # each plugin's rows together
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
        formatter.table(table, headers, widths)
        + f"\n\n{summary}"
        + check_devices_line(results)
        + "".join(f"\n{formatter.note(line)}" for line in _notes(results))
    )


def _passed_row(kernel: str, kind: str, dtype: str, group: Sequence[CaseResult]) -> list[str]:
    """One row for the passing cases of a plugin, kind and dtype: how many,
    and the worst error relative to its own tolerance (with that case's id)."""

    def share(r: CaseResult) -> float:
        used = (r.comparison or {}).get("tolerance_used")
        if used is not None:
            return float(used)
        error = (r.comparison or {}).get("max_error")
        bound = r.tolerance.rtol if r.tolerance else None
        return error / bound if error is not None and bound else -1.0

    worst = max(group, key=share)
    error = (worst.comparison or {}).get("max_error")
    used = (worst.comparison or {}).get("tolerance_used")
    what = f"{len(group)} {dtype} case{'s' * (len(group) != 1)}"
    what += check_kinds.get(kind).group_label()
    if error is None:
        return [kernel, what, "pass", "-", ""]
    note = _fmt(error, 3) + tolerance_note(worst.tolerance, used)
    return [kernel, what, "pass", note, f"worst: {worst.id.removeprefix(kernel + '-')}"]


PARTIAL_CHECK_BANNER = "[PARTIAL: check interrupted; only the cases below finished]"


def check_output(
    results: Sequence[CaseResult], fmt: str, interrupted: bool, every_case: bool = True
) -> str:
    """The check table, marked partial after Ctrl-C (a ``partial`` key in JSON)."""
    text = check_table(results, fmt, interrupted, every_case)
    if formats.get(fmt).document_only:  # JSON says so in its key; CSV stays one table
        return text
    return f"{PARTIAL_CHECK_BANNER}\n\n{text}" if interrupted else text


def tolerance_note(tolerance: Tolerance | None, used: float | None = None) -> str:
    """`` (tol 0.125)`` after an error: the bound it was held to (its rtol, in
    the error's own units of |A|@|B|, plus any absolute part), and, where the
    check recorded it, the share of that whole bound the worst element used
    (`` (tol 0.002 + 0.001 abs: 52% used)``): an error of 0.104 beside a tol
    of 0.002 that passed reads as a contradiction until the absolute part is
    counted in, which the share does (:data:`USED_LEGEND`)."""
    if tolerance is None:
        return ""
    absolute = f" + {significant(tolerance.atol, 3)} abs" if tolerance.atol else ""
    share = "" if used is None else f": {_percent(used)} used"
    return f" (tol {significant(tolerance.rtol, 3)}{absolute}{share})"


USED_LEGEND = (
    "max err: the worst |C-ref| / (|A|@|B|), the unit of the tolerance's rtol; its atol is "
    "absolute; used: the worst |C-ref| / (rtol*|A|@|B| + atol), the share of its bound an "
    "element used (a case passes up to 100%)"
)


ROUNDING_LEGEND = (
    "fp8 and int8: A and B dequantised (scales applied); the bound adds C's rounding to its "
    "dtype: half an ulp of the reference, and half its smallest subnormal"
)


def _percent(used: float) -> str:
    if not math.isfinite(used):
        return "inf"
    return f"{used:.0%}" if used < 10 else f"{used:.3g}x"


def _notes(results: Sequence[CaseResult]) -> list[str]:
    """The table's notes: what its error column means, where the share used is
    shown (checks saved before it was recorded render as they did), then why
    each tolerance is what it is."""
    shown = any((r.comparison or {}).get("tolerance_used") is not None for r in results)
    rounded = any(is_low_precision(r.problem.dtype) for r in results)
    return (
        ([USED_LEGEND] if shown else [])
        + ([ROUNDING_LEGEND] if rounded else [])
        + tolerance_reasons(results)
    )


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
        check = check_kinds.get(r.kind).summary_check(r)
        if r.status == "skip" or check is None:
            continue
        groups.setdefault((r.kernel, check), []).append(r)
    table: list[list[Cell]] = []
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
    return formats.get(fmt).table(table, headers, widths=[None, None, None, None, None, 70])


def case_detail(result: CaseResult) -> str:
    """One line of evidence for a case: the reason and the first bad elements."""
    return check_kinds.get(result.kind).detail(result)
