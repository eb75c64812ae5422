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
are refused: time it once, with their weights added.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from gemmreg.contract.bad_input import did_you_mean
from gemmreg.contract.low_precision import FP8_DTYPES, FP8_OUT_DTYPES, FP8_SCALINGS
from gemmreg.contract.options import MAX_DIGITS, MAX_SWEEP_POINTS, UsageError
from gemmreg.contract.records import (
    ALL_DTYPES,
    BATCH_LAYOUTS,
    LAYOUTS,
    BatchLayout,
    DType,
    Layout,
    OutDType,
    Scaling,
)

COLUMNS = (
    "m",
    "n",
    "k",
    "dtype",
    "layout",
    "weight",
    "name",
    "out_dtype",
    "scaling",
    "batch",
    "batch_layout",
    "groups",
)
"""The keys a row may have; ``m``, ``n`` and ``k`` are required (``m`` not
where ``groups`` names the members' m)."""
MAX_WEIGHT = 1e12
"""A weight is a relative count: above this it is a typo, not a frequency."""
SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".csv": "csv"}
YAML_MISSING = "reading YAML needs PyYAML: pip install pyyaml (or give the shapes as JSON or CSV)"

_DIGITS = re.compile(r"[ \t]*[0-9]+[ \t]*")


@attrs.frozen
class ShapeRow:
    """One row of a shapes file, checked."""

    m: int
    n: int
    k: int
    dtype: DType | None = None
    """None: the command's ``--dtype`` choices."""
    layout: Layout | None = None
    """None: the command's ``--layout`` choices."""
    weight: float = 1.0
    name: str = ""
    out_dtype: OutDType | None = None
    """An fp8 row's C dtype; None: the command's ``--out-dtype``, else bf16."""
    scaling: Scaling | None = None
    """An fp8 row's scaling; None: the command's ``--scaling``, else per tensor."""
    batch: int | None = None
    """The row's batch size; None: the command's ``--batch``, else 1."""
    batch_layout: BatchLayout | None = None
    """A batched row's batch layout; None: the command's ``--batch-layout``, else packed."""
    groups: tuple[int, ...] = ()
    """A grouped row's member sizes (``m`` their sum); (): not grouped."""

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)

    @property
    def batched(self) -> tuple[int | None, BatchLayout | None]:
        return (self.batch, self.batch_layout)


def read_shapes(path: Path) -> list[ShapeRow]:
    """Every row of ``path``, checked; UsageError (one line) on the first problem."""
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise UsageError(
            f"--shapes {str(path)!r}: unknown file type {path.suffix or '(none)'!r}: "
            "name a .yaml, .yml, .json or .csv file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise UsageError(f"--shapes {str(path)!r}: cannot read it: {reason}") from None
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
        row = _row(path, number, item)
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
        try:
            data = json.loads(text)
        except ValueError as error:  # JSONDecodeError, and RecursionError's kin
            raise UsageError(f"--shapes {str(path)!r}: not valid JSON: {error}") from None
        except RecursionError:
            raise UsageError(f"--shapes {str(path)!r}: not valid JSON: nested too deep") from None
    else:
        try:
            import yaml
        except ImportError:
            raise UsageError(f"--shapes {str(path)!r}: {YAML_MISSING}") from None
        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError, ValueError) as error:
            first = " ".join(str(error).split())
            raise UsageError(f"--shapes {str(path)!r}: not valid YAML: {first}") from None
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
            out.append({"\0extra": True})  # refused in _row, with its number
            continue
        out.append(
            {
                name.strip(): value.strip()
                for name, value in row.items()
                if value is not None and value.strip()
            }
        )
    return out


def _row(path: Path, number: int, item: Any) -> ShapeRow:
    where = f"--shapes {str(path)!r}: row {number}"
    if not isinstance(item, Mapping):
        raise UsageError(f"{where}: expected a mapping of {', '.join(COLUMNS)}, got {item!r:.40}")
    if "\0extra" in item:
        raise UsageError(f"{where}: more cells than the header has columns")
    unknown = [str(key) for key in item if key not in COLUMNS]
    if unknown:
        raise UsageError(
            f"{where}: unknown column {unknown[0]!r:.40} (columns: {', '.join(COLUMNS)})"
        )
    groups = _groups(where, item)
    missing = [key for key in ("m", "n", "k")[bool(groups) :] if key not in item]
    if missing:
        raise UsageError(f"{where}: missing {missing[0]}")
    n, k = (_dimension(where, key, item[key]) for key in ("n", "k"))
    m = _dimension(where, "m", item["m"]) if "m" in item else sum(groups)
    if groups and m != sum(groups):
        raise UsageError(
            f"{where}: m {m} is not the sum of its groups ({sum(groups)}): leave m out, "
            "or give the members' rows stacked"
        )
    fp8_only = [key for key in ("out_dtype", "scaling") if item.get(key) is not None]
    if fp8_only and item.get("dtype") not in (None, *FP8_DTYPES):
        raise UsageError(f"{where}: {fp8_only[0]} is for fp8 dtypes, not {item.get('dtype')!r:.40}")
    return ShapeRow(
        m=m,
        n=n,
        k=k,
        dtype=_member(where, "dtype", item.get("dtype"), ALL_DTYPES),
        layout=_member(where, "layout", item.get("layout"), LAYOUTS),
        weight=_weight(where, item.get("weight", 1.0)),
        name=str(item.get("name") or ""),
        out_dtype=_member(where, "out_dtype", item.get("out_dtype"), FP8_OUT_DTYPES),
        scaling=_member(where, "scaling", item.get("scaling"), FP8_SCALINGS),
        batch=_batch(where, item.get("batch")),
        batch_layout=_member(where, "batch_layout", item.get("batch_layout"), BATCH_LAYOUTS),
        groups=groups,
    )


def _groups(where: str, item: Mapping[str, Any]) -> tuple[int, ...]:
    from gemmreg.contract.grouping import parse_sizes

    value = item.get("groups")
    return () if value is None else parse_sizes(value, f"{where}: groups")


def _batch(where: str, value: Any) -> int | None:
    from gemmreg.contract.batching import MAX_BATCH

    if value is None:
        return None
    batch = _dimension(where, "batch", value)
    if batch > MAX_BATCH:
        raise UsageError(f"{where}: batch must be from 1 to {MAX_BATCH}, got {batch}")
    return batch


def _dimension(where: str, key: str, value: Any) -> int:
    if isinstance(value, str) and _DIGITS.fullmatch(value) and len(value.strip()) <= MAX_DIGITS:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 10**MAX_DIGITS:
        raise UsageError(f"{where}: {key} must be a positive integer, got {value!r:.40}")
    return value


def _member(where: str, key: str, value: Any, allowed: Sequence[Any]) -> Any:
    if value is None:
        return None
    if value not in allowed:
        raise UsageError(
            f"{where}: unknown {key} {value!r:.40}: choose from {', '.join(allowed)}"
            + did_you_mean(value, allowed)
        )
    return value


def _weight(where: str, value: Any) -> float:
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str) and value.isascii():
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or not 0 < number <= MAX_WEIGHT:
        raise UsageError(
            f"{where}: weight must be a number above 0 up to {MAX_WEIGHT:g}, got {value!r:.40}"
        )
    return number
