"""One row of a ``--shapes`` file (:mod:`gemmreg.timing.shape_files`), its
cells checked: the columns a row may have, each cell's allowed values, and
the first problem refused in one line naming the file and the row. Reading
the file (YAML, JSON, CSV) and the checks across rows stay there."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from gemmreg.contract.bad_input import did_you_mean
from gemmreg.contract.low_precision import FP8_DTYPES, FP8_OUT_DTYPES, FP8_SCALINGS
from gemmreg.contract.options import MAX_DIGITS, UsageError
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


def checked_row(path: Path, number: int, item: Any) -> ShapeRow:
    """Row ``number`` of ``path`` (from 1), checked; UsageError (one line) on its first problem."""
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
