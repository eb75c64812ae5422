"""Rendering of comparisons and runs: records in, text out (a sweep's table is
:mod:`gemmreg.reporting.render_sweep`, before/after changes
:mod:`gemmreg.reporting.render_changes`). Nothing here measures or decides;
the legends are generated from the constants they describe."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gemmreg.contract.batching import shown_shape
from gemmreg.contract.numbers import level_percent, ratio, ratio_span, significant, span
from gemmreg.contract.records import Tolerance
from gemmreg.reporting import compare_legend, format_csv, formats
from gemmreg.reporting.formats import Document, Row
from gemmreg.reporting.render import _fmt, tolerance_note
from gemmreg.reporting.render_verdicts import interval_text
from gemmreg.reporting.render_verdicts import (
    verdict_table as verdict_table,  # re-exported: a sweep's report ends with it
)
from gemmreg.reporting.run_summary import SUMMARY_COLUMNS as SUMMARY_COLUMNS
from gemmreg.reporting.run_summary import summary_rows
from gemmreg.timing import process_outliers, regimes, rounds
from gemmreg.timing.ceilings import speedup_ceiling
from gemmreg.timing.host_pace import host_pace_note
from gemmreg.timing.timing_records import SCHEMA, CompareReport, KernelSummary

PARTIAL_RUN_BANNER = (
    "[PARTIAL: the run stopped before its last point (interrupted, killed, "
    "or its storage failed); the points below finished]"
)
"""What a partial run's saved tables begin with: the folder cannot say which
of those ended it (a killed run, or a full disk, could not write it down)."""


IDEAL_GBPS_HEADER = "ideal GB/s"
"""Beside TFLOP/s: the problem's ideal traffic over the median (A and B read
once, C written once; :mod:`gemmreg.contract.traffic`), named ideal so that
nobody reads it as measured DRAM traffic."""

REPORT_FILES = {"report.txt": "table", "report.md": "markdown"}
"""The saved tables of a run, and their formats."""


def run_views(reports: Sequence[CompareReport], partial: bool) -> dict[str, str]:
    """The human views saved beside a run (:func:`gemmreg.reporting.runs.write_run`)."""
    rows = [row for report in reports for row in summary_rows(report)]
    banner = f"{PARTIAL_RUN_BANNER}\n\n" if partial else ""
    tables = {name: [compare_table(r, fmt) for r in reports] for name, fmt in REPORT_FILES.items()}
    return {
        "summary.csv": csv_text(rows),
        **{name: banner + "\n\n".join(text) for name, text in tables.items()},
    }


def csv_text(rows: Sequence[Row]) -> str:
    """The summary rows as CSV: ``summary.csv``, and ``--format csv`` of a run."""
    return format_csv.csv_text(rows, SUMMARY_COLUMNS)


def _no_records() -> Mapping[str, object]:
    raise ValueError("a sweep's JSON is its run: run_output(manifest, reports, partial, 'json')")


def run_document(
    reports: Sequence[CompareReport],
    manifest: Mapping[str, object] | None = None,
    partial: bool = False,
) -> Document:
    """A run as a document: its summary rows, or what ``run.json`` holds
    (without ``manifest``: a sweep's points, which have no records of their own)."""
    return Document(
        kind="run",
        schema=SCHEMA,
        records=_no_records
        if manifest is None
        else lambda: {"manifest": manifest, "partial": partial, "reports": list(reports)},
        rows=lambda: [row for report in reports for row in summary_rows(report)],
        columns=SUMMARY_COLUMNS,
    )


def run_output(
    manifest: Mapping[str, object], reports: Sequence[CompareReport], partial: bool, fmt: str
) -> str:
    """A run as ``report RUN`` prints it: a document (JSON: what ``run.json``
    holds, with its kind), or each point's table and, for a sweep, every
    verdict again, one line each."""
    document = formats.get(fmt).document(run_document(reports, manifest, partial))
    if document is not None:
        return document
    text = "\n\n".join(compare_table(r, fmt) for r in reports)
    if len(reports) > 1:
        text += "\n\n" + verdict_table(reports, fmt)
    return text


def _confidence(level: float | None) -> str:
    """A saved run of schema 1 has no level: its intervals were 95% bootstraps."""
    return "95% bootstrap" if level is None else level_percent(level)


def _start(s: KernelSummary) -> str:
    def total(prepare: float | None, first: float | None) -> float | None:
        return None if first is None else (prepare or 0) + first

    cold = total(s.cold_prepare_s, s.cold_first_call_s)
    warm = total(s.warm_prepare_s, s.warm_first_call_s)
    return f"{_fmt(cold, 3)} / {_fmt(warm, 3)}"


def _row(s: KernelSummary, figures: int) -> list[str]:
    """A kernel's row; ``figures``: the cells between its precision and its notes."""
    if s.status != "timed":
        return [s.kernel, s.precision, *["-"] * figures, f"{s.status.upper()}: {s.reason}"]
    notes = [f"INVALID: {why}" for why in s.invalid] + outlier_notes(s)
    notes += list(s.flags) + regimes.notes(s)
    assert s.center_ms is not None and s.low_ms is not None and s.high_ms is not None
    return [
        s.kernel,
        s.precision,
        significant(s.center_ms, 5),
        span(s.low_ms, s.high_ms, 5),
        _fmt(s.tflops, 4),
        _fmt(s.ideal_gbps, 4),
        _fmt(s.percent_of_peak, 3),
        *_figures(s, regimes.timed()),
        _fmt(s.host_ms, 3),
        *_figures(s, regimes.profiled()),
        _start(s),
        _fmt(s.max_error, 2) + _tolerance(s),
        "; ".join(notes) or "ok",
    ]


def outlier_notes(s: KernelSummary) -> list[str]:
    """The row's OUTLIER note (:mod:`gemmreg.timing.process_outliers`), or none."""
    note = process_outliers.outlier_note(s.outlier_medians_ms, s.center_ms)
    return [note] if note else []


def _figures(s: KernelSummary, among: Sequence[regimes.Regime]) -> list[str]:
    """The cells of the regimes ``among`` in ``s``'s row: the regimes measured in
    the timing processes stand before host ms, those of processes of their own after."""
    return [_fmt(figure, column.digits) for column, figure in regimes.figures(s, among)]


def _tolerance(s: KernelSummary) -> str:
    if s.rtol is None:  # a run saved before the tolerance was kept
        return ""
    return tolerance_note(Tolerance(rtol=s.rtol, atol=s.atol or 0.0, why=s.tolerance_why))


def _gpu(report: CompareReport) -> str:
    return "" if report.device_index is None else f" (gpu{report.device_index})"


def _protocol(report: CompareReport) -> str:
    how_many = (
        f"{report.repeats} rounds"
        if report.repeats
        else f"rounds until every pair is known to +-{rounds.TARGET_HALFWIDTH:.1%} (capped)"
    )
    dropped = sum(len(r.dropped) for r in report.records)
    taken = sum(r.rounds for r in report.records)
    drops = f", {dropped} of {taken} rounds dropped (throttled)" if dropped else ""
    placed = max((r.placements or 1 for r in report.records), default=1)
    where = f", operands in {placed} placements rotated across rounds" if placed > 1 else ""
    looks = f" (sequential, looks at {_looks(report)})" if report.looks else ""
    return (
        f"{report.processes} processes{looks}, interleaved equal-exposure {how_many}{where}{drops}"
    )


def _looks(report: CompareReport) -> str:
    """``3, 6``: the processes at each look, with the seconds the run had
    spent by then (``3 (9 s), 6 (19 s)``) where it kept them: the pace a
    ``--budget`` buys looks at."""
    if len(report.look_s) != len(report.looks):
        return ", ".join(map(str, report.looks))
    return ", ".join(f"{n} ({s:.0f} s)" for n, s in zip(report.looks, report.look_s, strict=True))


def verdict_lines(report: CompareReport) -> list[str]:
    lines = []
    by_name = {s.kernel: s for s in report.summaries}
    for v in report.verdicts:
        speed = ""
        if v.speedup is not None and v.interval is not None:
            speed = (
                f" (speedup {ratio(v.speedup)}x, {_confidence(v.confidence)} interval "
                f"{interval_text(v)}, {v.regime})"
            )
        lines.append(
            f"verdict: {v.kernel} vs {v.baseline}: {v.verdict.upper()}{speed}; {v.explanation}"
        )
        for r in v.regimes[1:]:
            if r.interval is not None:
                i = r.interval
                lines.append(
                    f"  {r.regime}: {r.word} {ratio(i.estimate)}x ({ratio_span(i.low, i.high)})"
                )
            elif r.estimate is not None:
                lines.append(f"  {r.regime}: {ratio(r.estimate)}x ({r.reason})")
            elif r.word != "not measured":
                lines.append(f"  {r.regime}: {r.word} ({r.reason})")
        ceiling = speedup_ceiling(report, v)
        if ceiling is not None:
            lines.append(f"  ceiling: {ceiling.text()} roof (the most any kernel could show here)")
        lines.extend(f"  note: {note}" for note in v.notes)
        paced = host_pace_note(v, by_name.get(v.kernel), by_name.get(v.baseline))
        if paced:
            lines.append(f"  note: {paced}")
    return lines


def compare_table(
    report: CompareReport, fmt: str, manifest: Mapping[str, object] | None = None
) -> str:
    """One point's table, legend and verdicts; its document is the point's
    summary rows, or its record with the manifest."""
    formatter = formats.get(fmt)
    document = formatter.document(
        Document(
            kind="compare",
            schema=SCHEMA,
            records=lambda: {"report": report, "manifest": manifest or {}},
            rows=lambda: summary_rows(report),
            columns=SUMMARY_COLUMNS,
        )
    )
    if document is not None:
        return document
    p = report.problem
    headers = [
        "plugin",
        "precision",
        "median ms",
        f"range over {report.processes} procs (ms)",
        "TFLOP/s",
        IDEAL_GBPS_HEADER,
        "% of peak",
        *(column.header for column in regimes.columns(regimes.timed())),
        "host ms",
        *(column.header for column in regimes.columns(regimes.profiled())),
        "cold / warm start s",
        "max err",
        "notes",
    ]
    lines = [
        f"{shown_shape(p)} {p.number_format} {p.layout} on {report.device_name}{_gpu(report)}: {_protocol(report)}, "
        f"seed {report.seed}" + ("  [PARTIAL: interrupted, no verdicts]" if report.partial else ""),
        f"clock: {report.clock}",
        "",
        formatter.table(
            [_row(s, len(headers) - 3) for s in report.summaries],
            headers,
            [None, 30, *[None] * (len(headers) - 3), 40],
        ),
        "",
        *compare_legend.legend(report),
        "",
    ]
    return "\n".join(lines + verdict_lines(report))
