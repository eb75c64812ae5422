"""The flat rows of a run, one per point and kernel: ``summary.csv``, a run's
``--format csv``, and what a sweep's table reads. Apart from the tables of
:mod:`gemmreg.reporting.render_compare`, which re-exports them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from gemmreg.reporting.formats import Cell
from gemmreg.reporting.problem_cells import PROBLEM_COLUMNS, problem_cells
from gemmreg.timing import regimes
from gemmreg.timing.timing_records import CompareReport

_BEFORE_REGIMES = (
    *PROBLEM_COLUMNS,
    "kernel",
    "package",
    "precision",
    "math",
    "execution",
    "variants",
    "status",
    "center_ms",
    "low_ms",
    "high_ms",
    "tflops",
    "ideal_gbps",
    "percent_of_peak",
)
_AFTER_REGIMES = (
    "launch_bound",
    "tile_efficiency",
    "cold_prepare_s",
    "cold_first_call_s",
    "warm_prepare_s",
    "warm_first_call_s",
    "processes",
    "outlier_processes",
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


class _Columns(Sequence[str]):
    """The summary rows' columns, those of the registered regimes read from
    the registry each time (those measured in the timing processes after
    ``percent_of_peak``, those of processes of their own after ``host_ms``):
    a regime registered after this module was imported has its columns too."""

    def _names(self) -> tuple[str, ...]:
        timed = (column.name for column in regimes.columns(regimes.timed()))
        profiled = (column.name for column in regimes.columns(regimes.profiled()))
        return (*_BEFORE_REGIMES, *timed, "host_ms", *profiled, *_AFTER_REGIMES)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __repr__(self) -> str:
        return repr(self._names())


SUMMARY_COLUMNS: Sequence[str] = _Columns()
"""One column per field of a kernel's row: ``summary.csv``, a run's CSV."""


def summary_rows(report: CompareReport) -> list[dict[str, Cell]]:
    """One flat row per kernel: the CSV and the sweep tables read these."""
    rows: list[dict[str, Cell]] = []
    p = report.problem
    for s in report.summaries:
        row: dict[str, Cell] = {column: getattr(s, column, None) for column in SUMMARY_COLUMNS}
        row.update(
            {column.name: figure for column, figure in regimes.figures(s, regimes.registered())}
        )
        row.update(
            **problem_cells(p),
            device_name=report.device_name,
            device_index=report.device_index,
            processes=len(s.process_medians_ms),
            outlier_processes=len(s.outlier_medians_ms) if s.status == "timed" else None,
            variants=";".join(s.variants),
            flags="; ".join(s.flags),
            invalid="; ".join(s.invalid),
        )
        rows.append(row)
    return rows
