"""``--format markdown``: GitHub's tables, to paste into a page or append to
a CI step summary. A cell never wraps (a continuation line there is a
phantom row): a line break inside a cell is ``<br>`` and ``|`` is escaped;
a line that touches a table is read as one of its rows, so a table stands
apart from the text around it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from gemmreg.reporting.formats import Cell, Formatter, register
from tabulate import tabulate

MARKDOWN_LINE_BREAK = "<br>"
"""A line break inside a markdown cell: GitHub renders it, and the row stays one line."""


def markdown_cell(cell: Cell) -> Cell:
    """A cell that cannot break a markdown row: ``|`` escaped, line breaks as
    ``<br>``. Numbers are left as numbers (tabulate aligns them)."""
    if not isinstance(cell, str):
        return cell
    lines = [line.replace("|", "\\|") for line in cell.splitlines()]
    return MARKDOWN_LINE_BREAK.join(lines)


@register
class MarkdownFormat(Formatter):
    name: ClassVar[str] = "markdown"
    rank: ClassVar[int] = 1
    table_apart: ClassVar[bool] = True

    def table(
        self,
        rows: Sequence[Sequence[Cell]],
        headers: Sequence[str],
        widths: Sequence[int | None] | None = None,
    ) -> str:
        """Widths are the terminal's: a markdown cell never wraps."""
        cells = [[markdown_cell(cell) for cell in row] for row in rows]
        return tabulate(cells, headers=[markdown_cell(h) for h in headers], tablefmt="github")

    def heading(self, title: str) -> str:
        return f"### {title}"

    def section(self, title: str) -> str:
        """A heading, capitalised as a page's headings are, with a blank line
        after it so that the table below it renders."""
        return f"### {title[:1].upper()}{title[1:]}\n"

    def note(self, line: str) -> str:
        """A list item: plain lines would run together into one paragraph."""
        return f"- {line}"
