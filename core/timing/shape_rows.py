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
from gemmreg.contract.bad_input import did_you_mean, shown
from gemmreg.contract.low_precision import FP8_DTYPES, FP8_OUT_DTYPES, FP8_SCALINGS
from gemmreg.contract.options import MAX_DIGITS, UsageError, decimal
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
MAX_NAME_CHARS = 200
"""A name is a label for people (``q_proj, o_proj``), printed beside a point."""

_DIGITS = re.compile(r"[ \t]*[0-9]+[ \t]*")
"""A size written as text (a CSV cell): ASCII digits only (``int`` itself also
takes ``1_0`` and other scripts' digits); a weight as text is read by
:func:`gemmreg.contract.options.decimal`."""


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
    source: str = attrs.field(default="", eq=False)
    """Where the row was read, ``--shapes 'FILE'``: a refusal of the points
    it makes (:mod:`gemmreg.timing.points`) names the file and :attr:`number`."""
    number: int = attrs.field(default=0, eq=False)
    """The row's number in its file, from 1."""

    @property
    def where(self) -> str:
        """``--shapes 'FILE': row N``, as every refusal of the row begins."""
        return f"{self.source}: row {self.number}"

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
        raise UsageError(f"{where}: expected a mapping of {', '.join(COLUMNS)}, got {shown(item)}")
    if "\0extra" in item:
        raise UsageError(f"{where}: more cells than the header has columns")
    repeated = getattr(item, "repeated", None)
    if repeated is not None:
        raise UsageError(f"{where}: names {shown(repeated)} twice: keep one")
    unknown = [key for key in item if key not in COLUMNS]
    if unknown:
        raise UsageError(
            f"{where}: unknown column {shown(unknown[0])} (columns: {', '.join(COLUMNS)})"
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
        raise UsageError(
            f"{where}: {fp8_only[0]} is for fp8 dtypes, not {shown(item.get('dtype'))}"
        )
    return ShapeRow(
        m=m,
        n=n,
        k=k,
        dtype=_member(where, "dtype", item.get("dtype"), ALL_DTYPES),
        layout=_member(where, "layout", item.get("layout"), LAYOUTS),
        weight=_weight(where, item.get("weight", 1.0)),
        name=_name(where, item.get("name")),
        out_dtype=_member(where, "out_dtype", item.get("out_dtype"), FP8_OUT_DTYPES),
        scaling=_member(where, "scaling", item.get("scaling"), FP8_SCALINGS),
        batch=_batch(where, item.get("batch")),
        batch_layout=_member(where, "batch_layout", item.get("batch_layout"), BATCH_LAYOUTS),
        groups=groups,
        source=f"--shapes {str(path)!r}",
        number=number,
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
        raise UsageError(f"{where}: {key} must be a positive integer, got {shown(value)}")
    return value


def _name(where: str, value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_NAME_CHARS:
        raise UsageError(
            f"{where}: name must be text of at most {MAX_NAME_CHARS} characters, got {shown(value)}"
        )
    return value


def _member(where: str, key: str, value: Any, allowed: Sequence[Any]) -> Any:
    if value is None:
        return None
    if not isinstance(value, str) or value not in allowed:
        raise UsageError(
            f"{where}: unknown {key} {shown(value)}: choose from {', '.join(allowed)}"
            + (did_you_mean(value, allowed) if isinstance(value, str) else "")
        )
    return value


def _weight(where: str, value: Any) -> float:
    number: float | None = None
    if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
        number = float(value) if abs(value) <= MAX_WEIGHT else math.inf  # no OverflowError
    elif isinstance(value, str):
        number = decimal(value)  # NaN unless written as a user writes a number
    if number is None or not math.isfinite(number) or not 0 < number <= MAX_WEIGHT:
        raise UsageError(
            f"{where}: weight must be a number above 0 up to {MAX_WEIGHT:g}, got {shown(value)}"
        )
    return number
