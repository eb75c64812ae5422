"""The flat rows of a run, one per point and kernel: ``summary.csv``, a run's
``--format csv``, and what a sweep's table reads. Apart from the tables of
:mod:`gemmreg.reporting.render_compare`, which re-exports them."""

from __future__ import annotations

from gemmreg.reporting.formats import Cell
from gemmreg.timing.timing_records import CompareReport

SUMMARY_COLUMNS = (
    "m",
    "n",
    "k",
    "dtype",
    "layout",
    "kernel",
    "package",
    "precision",
    "math",
    "execution",
    "status",
    "center_ms",
    "low_ms",
    "high_ms",
    "tflops",
    "percent_of_peak",
    "graph_ms",
    "host_ms",
    "device_kernel_ms",
    "launches_per_call",
    "launch_bound",
    "tile_efficiency",
    "cold_prepare_s",
    "cold_first_call_s",
    "warm_prepare_s",
    "warm_first_call_s",
    "processes",
    "samples",
    "exposure_s",
    "max_error",
    "rtol",
    "atol",
    "invalid",
    "flags",
    "reason",
    "device_name",
    "device_index",
)


def summary_rows(report: CompareReport) -> list[dict[str, Cell]]:
    """One flat row per kernel: the CSV and the sweep tables read these."""
    rows: list[dict[str, Cell]] = []
    p = report.problem
    for s in report.summaries:
        row: dict[str, Cell] = {column: getattr(s, column, None) for column in SUMMARY_COLUMNS}
        row.update(
            m=p.m,
            n=p.n,
            k=p.k,
            dtype=p.dtype,
            layout=p.layout,
            device_name=report.device_name,
            device_index=report.device_index,
            processes=len(s.process_medians_ms),
            flags="; ".join(s.flags),
            invalid="; ".join(s.invalid),
        )
        rows.append(row)
    return rows
