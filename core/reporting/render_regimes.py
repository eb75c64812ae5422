"""Rendering of every timing regime's word for each point and pair of a run
(``report RUN --regimes``): records in, text out.

Why: a verdict is the primary regime's word (end to end), and the other
regimes (graph replay, device kernels) show in ``--verdicts`` only as a note
when they disagree. A kernel engineer asking "is it faster in device time
too?" over a sweep otherwise reads every point's report or parses
``report.txt`` with a regex; this puts each regime's word, estimate and
interval side by side, one line per point and pair (csv and json: one row per
point, pair and regime)."""

from __future__ import annotations

from collections.abc import Sequence

from gemmreg.contract.batching import shown_shape
from gemmreg.contract.numbers import ratio, ratio_span
from gemmreg.reporting import formats
from gemmreg.reporting.device_sections import sections_or_document
from gemmreg.reporting.formats import Cell
from gemmreg.reporting.problem_cells import PROBLEM_COLUMNS, problem_cells
from gemmreg.timing.timing_records import CompareReport, RegimeResult

REGIMES_SCHEMA = 1
"""The layout of ``report --regimes --format json``: ``regimes``, the CSV's rows."""
REGIME_COLUMNS = (
    *PROBLEM_COLUMNS,
    "kernel",
    "baseline",
    "verdict",
    "regime",
    "primary",
    "word",
    "estimate",
    "low",
    "high",
    "confidence",
    "settled",
    "reason",
    "partial",
    "device_name",
    "device_index",
)
"""One row per point, pair and regime: ``verdict`` is the pair's headline
word (which an INVALID kernel or unlike execution can set apart from the
primary regime's ``word``); ``primary`` marks the regime the verdict is
judged in; ``settled`` is False for a one-process figure that neither
supports nor contradicts a verdict; ``low``/``high`` are empty where the
regime has no interval."""


def regime_names(reports: Sequence[CompareReport]) -> list[str]:
    """Every regime measured in the run, in the order the verdicts list them
    (primary first), so the table's columns follow the judging order."""
    names: list[str] = []
    for report in reports:
        for verdict in report.verdicts:
            for result in verdict.regimes:
                if result.regime not in names:
                    names.append(result.regime)
    return names


def regime_cell(result: RegimeResult | None) -> str:
    """One regime's answer in a table cell: ``WORD ESTIMATEx (LOW to HIGH)``,
    without the interval for a one-process figure, ``-`` where not measured."""
    if result is None or result.word == "not measured":
        return "-"
    word = result.word.upper()
    if result.interval is not None:
        i = result.interval
        return f"{word} {ratio(i.estimate)}x ({ratio_span(i.low, i.high)})"
    if result.estimate is not None:
        return f"{word} {ratio(result.estimate)}x"
    return word


def regime_rows(reports: Sequence[CompareReport]) -> list[dict[str, Cell]]:
    """Every regime of every pairwise verdict as a flat row, figures as numbers."""
    rows = []
    for report in reports:
        p = report.problem
        for v in report.verdicts:
            for index, r in enumerate(v.regimes):
                i = r.interval
                rows.append(
                    {
                        **problem_cells(p),
                        **{"kernel": v.kernel, "baseline": v.baseline, "verdict": v.verdict},
                        "regime": r.regime,
                        "primary": index == 0,
                        "word": r.word,
                        "estimate": i.estimate if i is not None else r.estimate,
                        "low": i.low if i is not None else None,
                        "high": i.high if i is not None else None,
                        "confidence": i.confidence if i is not None else v.confidence,
                        "settled": r.settled,
                        "reason": r.reason,
                        "partial": report.partial,
                        "device_name": report.device_name,
                        "device_index": report.device_index,
                    }
                )
    return rows


def regime_table(reports: Sequence[CompareReport], fmt: str) -> str:
    """Each point and pair's word in every regime; in a table or markdown,
    one column per regime and one section per device model, as in
    ``--verdicts``. A verdict with no regimes (no timing, or an interpreted
    kernel against a native one) shows its headline word and dashes."""
    done = sections_or_document(
        reports,
        fmt,
        lambda group: regime_table(group, fmt),
        kind="regimes",
        schema=REGIMES_SCHEMA,
        rows=regime_rows,
        columns=REGIME_COLUMNS,
    )
    if done is not None:
        return done
    formatter = formats.get(fmt)
    names = regime_names(reports)
    table = []
    for report in reports:
        p = report.problem
        for v in report.verdicts:
            by_regime = {r.regime: r for r in v.regimes}
            table.append(
                [
                    shown_shape(p),
                    p.number_format,
                    f"{v.kernel} vs {v.baseline}",
                    v.verdict.upper() + (" [PARTIAL]" if report.partial else ""),
                    *(regime_cell(by_regime.get(name)) for name in names),
                ]
            )
    return formatter.table(table, ("shape", "dtype", "pair", "verdict", *names))
