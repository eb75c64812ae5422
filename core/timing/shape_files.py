"""``--shapes FILE``: the problems of a run read from a file (YAML, JSON or
CSV), one row per shape, with an optional dtype, layout and weight (and for
an fp8 dtype, ``out_dtype`` and ``scaling``; for a batched problem, ``batch``
and ``batch_layout``; for a grouped one, ``groups``: each member's m, as
``0,1,512,4096`` or a list, beside the n and k they share, m left out or
their sum).

A file is input like any other: every row is checked before any work starts,
and the first problem is refused in one line naming the file and the row
(rows count from 1, in the order written; a CSV's header is not a row). The
weight says how much a shape counts (how often a model calls it, say): it is
carried into the run's records and weighs the run's geometric-mean speedup.

Rows are mappings with the keys of :data:`COLUMNS`. A JSON or YAML file is a
list of them, or a mapping whose ``shapes`` key holds the list. A CSV file has
a header naming its columns; lines starting with ``#`` are comments, and an
empty cell is an absent value. Two rows with the same shape, dtype and layout
are refused: time it once, with their weights added. How the file is read
(a regular file of a few MB; JSON and YAML strictly, decimal numbers only,
no YAML aliases, no key twice) is :mod:`gemmreg.timing.shape_documents`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gemmreg.contract.bad_input import shown
from gemmreg.contract.options import MAX_SWEEP_POINTS, UsageError
from gemmreg.timing import shape_documents
from gemmreg.timing.shape_rows import COLUMNS, ShapeRow, checked_row

__all__ = ["COLUMNS", "ShapeRow", "read_shapes"]

SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".csv": "csv"}


def read_shapes(path: Path) -> list[ShapeRow]:
    """Every row of ``path``, checked; UsageError (one line) on the first problem."""
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise UsageError(
            f"--shapes {str(path)!r}: unknown file type {path.suffix or '(none)'!r}: "
            "name a .yaml, .yml, .json or .csv file"
        )
    text = shape_documents.read_text(path)
    raw = _csv_rows(path, text) if kind == "csv" else _document_rows(path, text, kind)
    if not raw:
        raise UsageError(f"--shapes {str(path)!r}: no shapes in it")
    if len(raw) > MAX_SWEEP_POINTS:
        raise UsageError(
            f"--shapes {str(path)!r}: {len(raw)} rows, more than {MAX_SWEEP_POINTS} points"
        )
    rows: list[ShapeRow] = []
    seen: dict[tuple[Any, ...], int] = {}
    for number, item in enumerate(raw, 1):
        row = checked_row(path, number, item)
        key = (
            row.shape,
            row.dtype,
            row.layout,
            row.out_dtype,
            row.scaling,
            *row.batched,
            row.groups,
        )
        if key in seen:
            raise UsageError(
                f"--shapes {str(path)!r}: row {number} repeats row {seen[key]} "
                f"({row.m}x{row.n}x{row.k} {row.dtype or 'any dtype'} "
                f"{row.layout or 'any layout'}): keep one, with their weights added"
            )
        seen[key] = number
        rows.append(row)
    return rows


def _document_rows(path: Path, text: str, kind: str) -> list[Any]:
    if kind == "json":
        data = shape_documents.load_json(path, text)
    else:
        data = shape_documents.load_yaml(path, text)
    if isinstance(data, shape_documents.RepeatedKeys):
        raise UsageError(f"--shapes {str(path)!r}: names {shown(data.repeated)} twice")
    if isinstance(data, Mapping) and set(data) == {"shapes"}:
        data = data["shapes"]
    if data is None:
        return []
    if not isinstance(data, list):
        raise UsageError(
            f"--shapes {str(path)!r}: expected a list of rows (or a 'shapes' key holding "
            f"one), got {type(data).__name__}"
        )
    return data


def _csv_rows(path: Path, text: str) -> list[Any]:
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    try:
        reader = csv.DictReader(io.StringIO("\n".join(lines)), restkey="\0extra")
        rows = list(reader)
        header = reader.fieldnames or []
    except csv.Error as error:
        raise UsageError(f"--shapes {str(path)!r}: not valid CSV: {error}") from None
    columns = [name.strip() for name in header]
    unknown = [name for name in columns if name not in COLUMNS]
    if unknown:
        raise UsageError(
            f"--shapes {str(path)!r}: header: unknown column {unknown[0]!r} "
            f"(columns: {', '.join(COLUMNS)})"
        )
    if len(set(columns)) != len(columns):
        raise UsageError(f"--shapes {str(path)!r}: header names a column twice")
    out: list[Any] = []
    for row in rows:
        if "\0extra" in row:
            out.append({"\0extra": True})  # refused in checked_row, with its number
            continue
        out.append(
            {
                name.strip(): value.strip()
                for name, value in row.items()
                if value is not None and value.strip()
            }
        )
    return out
