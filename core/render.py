"""Rendering: records in, tables and JSON out. Nothing here measures or decides."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from gemmreg.availability import unavailable_reason
from gemmreg.checking import CaseResult
from gemmreg.comparing import CompareReport
from gemmreg.registry import Registry
from tabulate import tabulate

TABLE_FORMATS = {"table": "simple", "markdown": "github"}


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}g}"


def to_jsonable(value: Any) -> Any:
    if attrs.has(type(value)):
        return to_jsonable(attrs.asdict(value, recurse=False))
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def dumps(value: Any) -> str:
    return json.dumps(to_jsonable(value), indent=2, sort_keys=False)


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file and a rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes 0600; evidence is for sharing
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------------------
# gemmreg list
# ---------------------------------------------------------------------------


def list_rows(registry: Registry) -> list[dict[str, Any]]:
    rows = []
    for name in sorted(registry.kernels):
        kernel = registry.kernels[name]
        spec = kernel.spec
        caps = spec.capabilities
        reason = unavailable_reason(spec)
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
                "input_generator": spec.generator_name,
                "available": reason is None,
                "unavailable_reason": reason or "",
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
        return dumps({"counts": check_counts(results), "cases": results})
    table = []
    skipped: dict[tuple[str, str], int] = {}
    dtype_order = {d: i for i, d in enumerate(("fp32", "fp16", "bf16"))}
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
    for result in results:
        if result.status == "skip":  # one row per kernel and reason, not per case
            key = (result.kernel, result.reason)
            skipped[key] = skipped.get(key, 0) + 1
            continue
        comparison = result.comparison or {}
        table.append(
            [
                result.kernel,
                result.id.removeprefix(result.kernel + "-"),
                result.status.upper() if result.status != "pass" else "pass",
                _fmt(comparison.get("max_error"), 3),
                case_detail(result),
            ]
        )
    for (kernel, reason), count in skipped.items():
        table.append([kernel, f"{count} case{'s' * (count != 1)}", "SKIP", "-", reason])
    headers = ["plugin", "case", "status", "max err", "detail"]
    counts = check_counts(results)
    summary = ", ".join(
        f"{n} {status}" for status, n in counts.items() if n or status in ("pass", "fail")
    )
    return (
        tabulate(
            table,
            headers=headers,
            tablefmt=TABLE_FORMATS[fmt],
            maxcolwidths=[None, None, None, None, 70],
        )
        + f"\n\n{summary}"
    )


def case_detail(result: CaseResult) -> str:
    """One line of evidence for a case: the reason and the first bad elements."""
    comparison = result.comparison or {}
    if result.kind == "refusal":
        return result.reason.strip().splitlines()[0] if result.reason.strip() else result.status
    if result.status == "pass":
        return f"{comparison.get('total', '?')} elements within tolerance"
    text = result.reason.strip().splitlines()[0] if result.reason.strip() else result.status
    bad = comparison.get("first_bad") or ()
    if bad:
        shown = "; ".join(f"[{i},{j}] got {g:.6g} want {w:.6g}" for i, j, g, w in bad[:3])
        text += f"; first bad: {shown}"
    return text


# ---------------------------------------------------------------------------
# gemmreg compare
# ---------------------------------------------------------------------------


def compare_table(report: CompareReport, fmt: str, manifest: dict[str, Any] | None = None) -> str:
    if fmt == "json":
        return dumps({"report": report, "manifest": manifest or {}})
    p = report.problem
    table = []
    for s in report.summaries:
        if s.status != "timed":
            table.append(
                [s.kernel, s.precision, "-", "-", "-", "-", "-", f"{s.status.upper()}: {s.reason}"]
            )
            continue
        cold = f"{_fmt(s.prepare_s, 3)} / {_fmt(s.first_call_s, 3)}"
        table.append(
            [
                s.kernel,
                s.precision,
                f"{s.center_ms:.5g}",
                f"{s.low_ms:.5g}-{s.high_ms:.5g}",
                f"{s.tflops:.4g}",
                cold,
                _fmt(s.max_error, 2),
                "ok",
            ]
        )
    headers = [
        "plugin",
        "precision",
        "median ms",
        f"range over {report.processes} processes (ms)",
        "TFLOP/s",
        "cold start s (prepare / 1st call)",
        "max err",
        "checks",
    ]
    lines = [
        f"{p.shape} {p.dtype} {p.layout}: {report.processes} processes x ({report.warmup} warmup + "
        f"{report.repeats} timed), seed {report.seed}\nclock: {report.clock}"
        + ("  [PARTIAL: interrupted]" if report.partial else ""),
        "",
        tabulate(
            table,
            headers=headers,
            tablefmt=TABLE_FORMATS[fmt],
            maxcolwidths=[None, 34, None, None, None, None, None, 50],
        ),
        "",
        "median ms: median of the per-process medians; range: lowest to highest process median;",
        "TFLOP/s: 2MNK / median; max err: worst |C-ref| / (|A|@|B|) over pre- and postchecks;",
        "cold start: prepare (compile) and first call in each fresh worker process, medians;",
        "Triton's on-disk compile cache is left as found, so its first call may be a warm-cache one.",
        "",
    ]
    for v in report.verdicts:
        speed = f" ({v.speedup:.3g}x {v.baseline}'s speed)" if v.speedup else ""
        lines.append(
            f"verdict: {v.kernel} vs {v.baseline}: {v.verdict.upper()}{speed}; {v.explanation}"
        )
        lines.extend(f"  note: {note}" for note in v.notes)
    return "\n".join(lines)
