"""A run over several device models, rendered one section per model: a
verdict only ever pairs figures of one model (:mod:`gemmreg.workers.devices`),
and tables never set two models' figures side by side."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gemmreg.checking.check_runner import CaseResult
from gemmreg.contract import numbers
from gemmreg.reporting import formats
from gemmreg.reporting.formats import Cell, Document, Formatter
from gemmreg.timing.timing_records import CompareReport


def by_device_model(reports: Sequence[CompareReport]) -> dict[str, list[CompareReport]]:
    """A run's reports by the device model they ran on, in order of appearance."""
    grouped: dict[str, list[CompareReport]] = {}
    for report in reports:
        grouped.setdefault(report.device_name, []).append(report)
    return grouped


def per_model(
    reports: Sequence[CompareReport],
    render: Callable[[Sequence[CompareReport]], str],
    formatter: Formatter,
) -> str | None:
    """``render`` of each model's reports under a heading naming the model
    (a markdown heading in ``markdown``), or None when the run has only one
    model (rendered as it always was). A document has no sections: its rows
    name the device in columns (``device_name``, ``device_index``)."""
    grouped = by_device_model(reports)
    if len(grouped) < 2 or formatter.document_only:
        return None
    return "\n\n".join(
        f"{section_heading(model, len(group), formatter)}\n{render(group)}"
        for model, group in grouped.items()
    )


def sections_or_document(
    reports: Sequence[CompareReport],
    fmt: str,
    render: Callable[[Sequence[CompareReport]], str],
    *,
    kind: str,
    schema: int,
    rows: Callable[[Sequence[CompareReport]], list[dict[str, Cell]]],
    columns: Sequence[str],
) -> str | None:
    """What a run's one-line-per-point view (``--verdicts``, ``--regimes``,
    ``--kernels``) writes before its own text table: ``render`` of each
    device model's reports under its heading (:func:`per_model`), or the
    document of its ``rows`` (csv: the rows; json: ``partial`` and the rows
    under ``kind``); None where the view's text table of one model is the answer."""
    formatter = formats.get(fmt)
    sections = per_model(reports, render, formatter)
    if sections is not None:
        return sections
    return formatter.document(
        Document(
            kind=kind,
            schema=schema,
            records=lambda: {"partial": any(r.partial for r in reports), kind: rows(reports)},
            rows=lambda: rows(reports),
            columns=columns,
        )
    )


def section_heading(model: str, points: int, formatter: Formatter) -> str:
    """The heading of one model's section: a markdown heading (a blank line
    after it, so the table below it renders), a ruled line on a terminal."""
    return formatter.section(f"on {model} ({numbers.counted(points, 'point')})")


def check_devices_line(results: Sequence[CaseResult]) -> str:
    """Which GPU each plugin's cases ran on, for a check spread over several
    (``--devices``): '' for a check on one device."""
    where: dict[str, list[str]] = {}
    for r in results:
        if r.device_index is not None:
            gpu = f"gpu{r.device_index} ({r.device_name})"
            names = where.setdefault(gpu, [])
            if r.kernel not in names:
                names.append(r.kernel)
    if not where:
        return ""
    return "\nran on: " + "; ".join(f"{gpu}: {', '.join(ks)}" for gpu, ks in sorted(where.items()))
