"""Rendering of a run's verdicts, one line per point and pair (``report
--verdicts``, and the tail of a sweep's report): records in, text out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gemmreg.contract.batching import shown_shape
from gemmreg.contract.numbers import ratio, ratio_span
from gemmreg.reporting import formats
from gemmreg.reporting.device_sections import sections_or_document
from gemmreg.reporting.formats import Cell
from gemmreg.reporting.problem_cells import PROBLEM_COLUMNS, problem_cells
from gemmreg.reporting.render import _fmt
from gemmreg.timing.ceilings import speedup_ceiling
from gemmreg.timing.host_pace import host_pace_note
from gemmreg.timing.process_outliers import outlier_note
from gemmreg.timing.timing_records import CompareReport, KernelSummary, Verdict

VERDICTS_SCHEMA = 1
"""The layout of ``report --verdicts --format json``: ``verdicts``, the CSV's rows."""
VERDICT_COLUMNS = (
    *PROBLEM_COLUMNS,
    "kernel",
    "baseline",
    "ms",
    "baseline_ms",
    "speedup",
    "speedup_low",
    "speedup_high",
    "ceiling",
    "ceiling_roof",
    "confidence",
    "processes",
    "regime",
    "verdict",
    "partial",
    "notes",
    "device_name",
    "device_index",
)
"""One row per point and pair: the speedup (baseline time / kernel time) and
its interval's ends as numbers, at ``confidence`` (empty in runs saved
before it was kept: their intervals were 95% bootstraps), over ``processes``
(a sequential run's: those of the look that decided; empty in runs saved
before it was kept). ``ceiling``: the most speedup the kernel could show over
its baseline under the device's datasheet roofs, ``ceiling_roof`` the roof
that sets it (:mod:`gemmreg.timing.ceilings`); empty where no peak is known."""
VERDICT_HEADERS = (
    "shape",
    "dtype",
    "pair",
    "ms",
    "baseline ms",
    "speedup",
    "interval",
    "ceiling",
    "procs",
    "verdict",
    "notes",
)


def interval_text(v: Verdict) -> str:
    """A verdict's interval, ``LOW to HIGH``, or ``-`` without one."""
    return ratio_span(*v.interval) if v.interval else "-"


def verdict_notes(v: Verdict, by_name: Mapping[str, KernelSummary]) -> str:
    """The verdict's notes, the HOST-PACED note where an eager loop would
    read it the other way, then the OUTLIER note of either kernel: a verdict
    rests on every process, the one far from the rest included."""
    notes = list(v.notes)
    paced = host_pace_note(v, by_name.get(v.kernel), by_name.get(v.baseline))
    notes += [paced] if paced else []
    for name in (v.kernel, v.baseline):
        s = by_name.get(name)
        note = outlier_note(s.outlier_medians_ms, s.center_ms) if s is not None else ""
        notes += [f"{name}: {note}"] if note else []
    return "; ".join(notes)


def verdict_rows(reports: Sequence[CompareReport]) -> list[dict[str, Cell]]:
    """Every pairwise verdict of a run as a flat row, figures as numbers."""
    rows = []
    for report in reports:
        p = report.problem
        by_name = {s.kernel: s for s in report.summaries}
        for v in report.verdicts:
            mine, base = by_name.get(v.kernel), by_name.get(v.baseline)
            low, high = v.interval or (None, None)
            ceiling = speedup_ceiling(report, v)
            rows.append(
                {
                    **problem_cells(p),
                    "kernel": v.kernel,
                    "baseline": v.baseline,
                    "ms": mine.center_ms if mine else None,
                    "baseline_ms": base.center_ms if base else None,
                    "speedup": v.speedup,
                    "speedup_low": low,
                    "speedup_high": high,
                    "ceiling": ceiling.speedup if ceiling else None,
                    "ceiling_roof": ceiling.roof if ceiling else None,
                    "confidence": v.confidence,
                    "processes": v.processes,
                    "regime": v.regime,
                    "verdict": v.verdict,
                    "partial": report.partial,
                    "notes": verdict_notes(v, by_name),
                    "device_name": report.device_name,
                    "device_index": report.device_index,
                }
            )
    return rows


def verdict_table(reports: Sequence[CompareReport], fmt: str) -> str:
    """Every pairwise verdict of a run, one line per point and pair: the
    one-screen answer to "where does it stand?" over a sweep; in a table or
    markdown, one section per device model, as a verdict only ever pairs
    figures of one model (csv and json: the device_name column)."""
    done = sections_or_document(
        reports,
        fmt,
        lambda group: verdict_table(group, fmt),
        kind="verdicts",
        schema=VERDICTS_SCHEMA,
        rows=verdict_rows,
        columns=VERDICT_COLUMNS,
    )
    if done is not None:
        return done
    formatter = formats.get(fmt)
    table = []
    for report in reports:
        p = report.problem
        by_name = {s.kernel: s for s in report.summaries}
        for v in report.verdicts:
            mine, base = by_name.get(v.kernel), by_name.get(v.baseline)
            ceiling = speedup_ceiling(report, v)
            table.append(
                [
                    shown_shape(p),
                    p.number_format,
                    f"{v.kernel} vs {v.baseline}",
                    _fmt(mine.center_ms if mine else None, 5),
                    _fmt(base.center_ms if base else None, 5),
                    f"{ratio(v.speedup)}x" if v.speedup is not None else "-",
                    interval_text(v),
                    ceiling.text() if ceiling else "-",
                    "-" if v.processes is None else str(v.processes),
                    v.verdict.upper() + (" [PARTIAL]" if report.partial else ""),
                    verdict_notes(v, by_name),
                ]
            )
    return formatter.table(table, VERDICT_HEADERS)
