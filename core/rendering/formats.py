"""The output formats every command that prints rows offers, and how each is
written: one definition, so that ``--format csv`` means the same thing in
``list`` as in ``report``.

- **table**: for a terminal; long cells wrap onto continuation lines.
- **markdown**: GitHub's table, to paste into a page or a CI step summary.
  A cell never wraps (a continuation line there is a phantom row), a line
  break inside a cell is ``<br>``, and ``|`` is escaped.
- **csv**: one header line, then one line per row; figures are bare numbers
  (never ``1.4 (1.3 to 1.5)``: a value and its range are three columns).
- **json**: one object, ``{"schema": N, "kind": "gemmreg.<kind>", ...}`` with
  the rows under a key (docs/formats.md lists each kind and its keys).

Text besides the rows (progress, notes, warnings) goes to stderr for csv and
json, or is left out, so that their stdout parses whole.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from gemmreg.contract.serialization import SCHEMA_KEY, dumps
from tabulate import tabulate

FORMATS: tuple[str, ...] = ("table", "markdown", "csv", "json")
"""What ``--format`` takes, for every command that prints rows."""
TABULATE_STYLES = {"table": "simple", "markdown": "github"}
"""tabulate's style for each text format."""
KIND_KEY = "kind"
"""The key naming what a JSON document holds, beside its schema version."""
KIND_PREFIX = "gemmreg."
"""Every kind is namespaced: a document found on its own says whose it is."""
MARKDOWN_LINE_BREAK = "<br>"
"""A line break inside a markdown cell: GitHub renders it, and the row stays one line."""


def grid(
    rows: Sequence[Sequence[Any]],
    headers: Sequence[str],
    fmt: str,
    widths: Sequence[int | None] | None = None,
) -> str:
    """A table as text: ``widths`` (the widest a column may be before its
    cells wrap) apply to the terminal table only; markdown cells never wrap."""
    if fmt == "markdown":
        cells = [[markdown_cell(cell) for cell in row] for row in rows]
        return tabulate(cells, headers=[markdown_cell(h) for h in headers], tablefmt="github")
    return tabulate(
        rows,
        headers=list(headers),
        tablefmt=TABULATE_STYLES.get(fmt, "simple"),
        maxcolwidths=list(widths) if widths is not None and rows else None,
    )


def markdown_cell(cell: Any) -> Any:
    """A cell that cannot break a markdown row: ``|`` escaped, line breaks as
    ``<br>``. Numbers are left as numbers (tabulate aligns them)."""
    if not isinstance(cell, str):
        return cell
    lines = [line.replace("|", "\\|") for line in cell.splitlines()]
    return MARKDOWN_LINE_BREAK.join(lines)


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A header and one line per row; None is an empty cell, numbers are
    written as Python writes them (``float()`` reads each back exactly)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in columns})
    return buffer.getvalue().rstrip("\n")


def json_document(kind: str, schema: int, body: Mapping[str, Any]) -> str:
    """A JSON output: its schema version and kind first, then ``body``."""
    return dumps({SCHEMA_KEY: schema, KIND_KEY: KIND_PREFIX + kind, **body})
