"""Rendering of the device kernels each plugin's timed calls launched
(``report RUN --kernels``): records in, text out.

Why: a plugin that dispatches (cuBLAS's heuristics, a tuner, split-K below
some size, a fallback for layouts a fast path refuses) runs different code
at different points of one sweep, and a speedup means little until one
knows which code it measured. The plugin may name its choice on the launch
(``gemmreg.variant``: ``KernelSummary.variants``), and the device-kernel
regime's profile records the names of the kernels each profiled call
launched, as the profiler reports them (``KernelSummary.device_kernels``);
this lists both, one line per point and plugin. A table shortens each
kernel name to what precedes its template and parameter lists
(``cublasLt::splitKreduce_kernel``); csv and json keep the names whole."""

from __future__ import annotations

from collections.abc import Sequence

from gemmreg.contract.batching import shown_shape
from gemmreg.contract.numbers import significant
from gemmreg.reporting import formats
from gemmreg.reporting.device_sections import sections_or_document
from gemmreg.reporting.formats import Cell
from gemmreg.reporting.problem_cells import PROBLEM_COLUMNS, problem_cells
from gemmreg.timing.timing_records import CompareReport

KERNELS_SCHEMA = 1
"""The layout of ``report --kernels --format json``: ``kernels``, the CSV's rows."""
KERNEL_COLUMNS = (
    *PROBLEM_COLUMNS,
    "kernel",
    "status",
    "variants",
    "device_kernels",
    "launches_per_call",
    "device_kernel_ms",
    "partial",
    "device_name",
    "device_index",
)
"""One row per point and plugin: ``variants`` what the plugin named its
launches (``;``-separated, each once; empty where it named nothing),
``device_kernels`` the profiled calls' kernel names, ``;``-separated in
launch order (empty where no call was profiled: a CPU run, a GPU without the
profiler, or a run saved before the names were kept); ``launches_per_call`` and ``device_kernel_ms`` the
profile's launches and summed device time per call."""
EMPTY_CELL = "-"
"""A table's cell with nothing to show: no call profiled, no variant named."""


def short_name(name: str) -> str:
    """A profiler's kernel name without its ``void`` return type, template
    arguments and parameter list: what tells two kernels apart at a glance."""
    text = name.strip()
    if text.startswith("void "):
        text = text[len("void ") :]
    for stop in ("<", "("):
        if stop in text:
            text = text[: text.index(stop)]
    return text.strip() or name.strip()


def kernel_rows(reports: Sequence[CompareReport]) -> list[dict[str, Cell]]:
    """Every plugin at every point as a flat row, names whole."""
    rows = []
    for report in reports:
        for s in report.summaries:
            rows.append(
                {
                    **problem_cells(report.problem),
                    "kernel": s.kernel,
                    "status": s.status,
                    "variants": ";".join(s.variants),
                    "device_kernels": ";".join(s.device_kernels),
                    "launches_per_call": s.launches_per_call,
                    "device_kernel_ms": s.device_kernel_ms,
                    "partial": report.partial,
                    "device_name": report.device_name,
                    "device_index": report.device_index,
                }
            )
    return rows


def profiled(reports: Sequence[CompareReport]) -> bool:
    """Whether any call in the run was profiled: the caller says why the
    list is empty when none was."""
    return any(s.device_kernels for report in reports for s in report.summaries)


def named(reports: Sequence[CompareReport]) -> bool:
    """Whether any plugin of the run named its launches: the table's
    variant column is left out where none did."""
    return any(s.variants for report in reports for s in report.summaries)


def kernel_table(reports: Sequence[CompareReport], fmt: str) -> str:
    """What each plugin ran at each point (its variants, the device kernels
    its profiled calls launched); in a table or markdown, one section per
    device model, as in ``--verdicts``."""
    done = sections_or_document(
        reports,
        fmt,
        lambda group: kernel_table(group, fmt),
        kind="kernels",
        schema=KERNELS_SCHEMA,
        rows=kernel_rows,
        columns=KERNEL_COLUMNS,
    )
    if done is not None:
        return done
    formatter = formats.get(fmt)
    table = []
    variants = named(reports)
    for report in reports:
        p = report.problem
        for s in report.summaries:
            names = " + ".join(short_name(n) for n in s.device_kernels)
            launches = s.launches_per_call
            table.append(
                [
                    shown_shape(p),
                    p.number_format,
                    s.kernel + (" [PARTIAL]" if report.partial else ""),
                    *([", ".join(s.variants) or EMPTY_CELL] if variants else []),
                    names or (s.status if s.status != "timed" else EMPTY_CELL),
                    significant(launches) if launches is not None else EMPTY_CELL,
                    significant(s.device_kernel_ms * 1e3)
                    if s.device_kernel_ms is not None
                    else EMPTY_CELL,
                ]
            )
    columns = (
        "shape",
        "dtype",
        "plugin",
        *(["variant"] if variants else []),
        "device kernels",
        "launches",
        "device us",
    )
    return formatter.table(table, columns)
