"""A sweep at a glance (``bench``): one line per point and kernel, as a
table, markdown or CSV; the per-point tables and the run's documents are
:mod:`gemmreg.reporting.render_compare`'s. Records in, text out."""

from __future__ import annotations

from collections.abc import Sequence

from gemmreg.contract.batching import shown_shape
from gemmreg.contract.numbers import significant, span
from gemmreg.reporting import formats
from gemmreg.reporting.device_sections import per_model
from gemmreg.reporting.render_compare import IDEAL_GBPS_HEADER, outlier_notes, run_document
from gemmreg.timing import regimes
from gemmreg.timing.timing_records import CompareReport, KernelSummary

SWEEP_HEADERS = [
    "shape",
    "dtype",
    "plugin",
    "math",
    "median ms",
    "range (ms)",
    "TFLOP/s",
    IDEAL_GBPS_HEADER,
    "notes",
]


def sweep_table(reports: Sequence[CompareReport], fmt: str = "table") -> str:
    """A sweep at a glance: one line per point and kernel (``bench``), as a
    table, markdown or CSV (with each row's device_name and device_index);
    its JSON is the whole run (:func:`gemmreg.reporting.render_compare.run_output`). A run over several
    device models gets one section per model in the table and markdown."""
    formatter = formats.get(fmt)
    document = formatter.document(run_document(reports))
    if document is not None:
        return document
    sections = per_model(reports, lambda group: sweep_table(group, fmt), formatter)
    if sections is not None:
        return sections
    table: list[list[str]] = []
    layouts: list[str] = []
    for report in reports:
        p = report.problem
        for s in report.summaries:
            table.append(
                [
                    shown_shape(p),
                    p.number_format,
                    s.kernel,
                    s.math,
                    significant(s.center_ms, 5) if s.center_ms else "-",
                    span(s.low_ms, s.high_ms, 5) if s.low_ms and s.high_ms is not None else "-",
                    significant(s.tflops) if s.tflops else "-",
                    significant(s.ideal_gbps) if s.ideal_gbps else "-",
                    s.status if s.status != "timed" else _sweep_notes(s),
                ]
            )
            layouts.append(p.layout)
    headers = SWEEP_HEADERS
    if any(layout != "rowmajor" for layout in layouts):  # a column only where layouts vary
        headers = [*headers[:2], "layout", *headers[2:]]
        table = [
            [*cells[:2], layout, *cells[2:]] for cells, layout in zip(table, layouts, strict=True)
        ]
    return formatter.table(table, headers)


def _sweep_notes(s: KernelSummary) -> str:
    return "; ".join(outlier_notes(s) + regimes.notes(s)) or "ok"
