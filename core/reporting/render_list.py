"""Rendering of ``gemmreg list``: one row per plugin (or per plugin and dtype
in CSV, where each tolerance is two numbers); records in, text out."""

from __future__ import annotations

from typing import TypedDict

from gemmreg.contract.inputs import generator_name
from gemmreg.contract.low_precision import FP8_DTYPES
from gemmreg.discovery.registry import Registry
from gemmreg.reporting import formats
from gemmreg.reporting.formats import Cell, Document

LIST_SCHEMA = 1
"""The layout of ``list --format json``: ``plugins``, one object per plugin."""
LIST_CSV_COLUMNS = (
    "name",
    "package",
    "plugin",
    "dtype",
    "available",
    "precision",
    "rtol",
    "atol",
    "backends",
    "layouts",
    "input_generator",
    "broken",
    "unavailable_reason",
)
"""One CSV row per plugin and dtype (a BROKEN plugin: one row, no dtype);
``backends`` and ``layouts`` are ``;``-separated."""


class ListedTolerance(TypedDict):
    rtol: float
    atol: float
    why: str


class ListedPlugin(TypedDict, total=False):
    """One plugin of ``list --format json``; a BROKEN plugin (one that did
    not load) has its names, ``available``, ``broken`` (the stage it failed
    in), ``unavailable_reason`` and ``output`` only."""

    name: str
    package: str
    plugin: str
    summary: str
    backends: list[str]
    dtypes: list[str]
    layouts: list[str]
    precision: dict[str, str]
    tolerance: dict[str, ListedTolerance]
    out_dtypes: list[str]
    """Only for a kernel that declares fp8: the output dtypes it writes."""
    scalings: list[str]
    """Likewise: the scalings it takes."""
    batch_layouts: list[str]
    """Only for a kernel that takes batched problems: their batch layouts."""
    grouped: bool
    """Only for a kernel that takes grouped problems (MoE): True."""
    input_generator: str
    available: bool
    broken: str
    unavailable_reason: str
    output: str


def list_rows(registry: Registry) -> list[ListedPlugin]:
    rows: list[ListedPlugin] = []
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
        if caps.dtypes & set(FP8_DTYPES):  # kept out of every other row: as it was
            rows[-1]["out_dtypes"] = sorted(caps.out_dtypes)
            rows[-1]["scalings"] = sorted(caps.scalings)
        if caps.batch_layouts:  # likewise
            rows[-1]["batch_layouts"] = sorted(caps.batch_layouts)
        if caps.grouped:  # likewise
            rows[-1]["grouped"] = True
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


def list_csv_rows(rows: list[ListedPlugin]) -> list[dict[str, Cell]]:
    """The listing flattened: one row per plugin and dtype, tolerances as numbers."""
    flat: list[dict[str, Cell]] = []
    for row in rows:
        common: dict[str, Cell] = {
            "name": row["name"],
            "package": row["package"],
            "plugin": row["plugin"],
            "available": row["available"],
            "broken": row.get("broken"),
            "unavailable_reason": row["unavailable_reason"],
        }
        if "broken" in row:
            flat.append(common)
            continue
        common.update(
            backends=";".join(row["backends"]),
            layouts=";".join(row["layouts"]),
            input_generator=row["input_generator"],
        )
        for dtype in row["dtypes"]:
            tolerance = row["tolerance"].get(dtype)
            flat.append(
                {
                    **common,
                    "dtype": dtype,
                    "precision": row["precision"].get(dtype),
                    "rtol": tolerance["rtol"] if tolerance else None,
                    "atol": tolerance["atol"] if tolerance else None,
                }
            )
    return flat


def list_table(registry: Registry, fmt: str) -> str:
    formatter = formats.get(fmt)
    document = formatter.document(
        Document(
            kind="list",
            schema=LIST_SCHEMA,
            records=lambda: {"plugins": list_rows(registry)},
            rows=lambda: list_csv_rows(list_rows(registry)),
            columns=LIST_CSV_COLUMNS,
        )
    )
    if document is not None:
        return document
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
                _dtypes_cell(row),
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
    return formatter.table(table, headers, widths=[None, None, 12, 14, 44, 40, 28])


def _dtypes_cell(row: ListedPlugin) -> str:
    """The dtypes, and for fp8 what it writes and how it is scaled
    (``fp8e4m3 -> bf16, fp32 (tensor, rowwise)``); a line ``batched: packed,
    strided`` for a kernel that takes batched problems, ``grouped`` for one
    that takes grouped problems."""
    batched = row.get("batch_layouts")
    last = f"\nbatched: {', '.join(batched)}" if batched else ""
    last += "\ngrouped" if row.get("grouped") else ""
    fp8 = [d for d in row["dtypes"] if d in FP8_DTYPES]
    if not fp8:
        return ", ".join(row["dtypes"]) + last
    how = f" -> {', '.join(row['out_dtypes'])} ({', '.join(row['scalings'])})"
    return ", ".join(d + how if d in fp8 else d for d in row["dtypes"]) + last
