"""``--format table`` (the default): for a terminal. Long cells wrap onto
continuation lines within the widths a renderer gives; a device model's
part of an output is set apart by a ruled line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from gemmreg.reporting.formats import Cell, Formatter, register
from tabulate import tabulate


@register
class TableFormat(Formatter):
    name: ClassVar[str] = "table"
    rank: ClassVar[int] = 0

    def table(
        self,
        rows: Sequence[Sequence[Cell]],
        headers: Sequence[str],
        widths: Sequence[int | None] | None = None,
    ) -> str:
        return tabulate(
            rows,
            headers=list(headers),
            tablefmt="simple",
            maxcolwidths=list(widths) if widths is not None and rows else None,
        )

    def heading(self, title: str) -> str:
        return title

    def section(self, title: str) -> str:
        return f"== {title} =="

    def note(self, line: str) -> str:
        return line
