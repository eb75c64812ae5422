"""``--format csv``: one header line, then one line per row. Figures are
bare numbers that ``float()`` reads (never ``1.4 (1.3 to 1.5)``: a value and
its range are three columns); what a row cannot hold is said on stderr."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import ClassVar

from gemmreg.reporting.formats import Document, DocumentFormatter, Row, Writes, register


def csv_text(rows: Sequence[Row], columns: Sequence[str]) -> str:
    """A header and one line per row; None is an empty cell, numbers are
    written as Python writes them (``float()`` reads each back exactly)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in columns})
    return buffer.getvalue().rstrip("\n")


@register
class CsvFormat(DocumentFormatter):
    name: ClassVar[str] = "csv"
    rank: ClassVar[int] = 2
    writes: ClassVar[Writes] = "rows"

    def document(self, document: Document) -> str:
        return csv_text(document.rows(), document.columns)
