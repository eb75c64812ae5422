"""The user's own peaks: a JSON or TOML file named by ``GEMMREG_PEAKS`` (or by
``report --peaks FILE``, which sets it), whose entries come before the
datasheet table (:mod:`gemmreg.timing.peaks_table`).

A device the table lacks, a board clocked differently from its datasheet, a
figure measured rather than quoted: the user's entry wins. An entry named
like one of the table's inherits what it does not say (its pattern among
them), so a single figure can be corrected alone. ``GEMMREG_PEAKS`` is a
switch every manifest records, so a run taken under other peaks says so.

TOML (``.toml``)::

    [devices."RX 9070 XT"]
    memory_tb_s = 0.62          # measured
    source = "our stream benchmark, 2026-11"

    [devices."My accelerator"]
    pattern = "MyAccel"         # a case-insensitive regular expression
    source = "vendor sheet rev 3"
    memory_tb_s = 1.0
    fp32 = 20.0
    fp16 = 80.0
    bf16 = 80.0

JSON: the same as ``{"devices": {"NAME": {...}}}``.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import attrs
from gemmreg.timing.peaks_table import DEVICES, DevicePeaks

PEAKS_ENV = "GEMMREG_PEAKS"
"""The file of the user's peaks, read wherever peaks are looked up."""
RATE_FIELDS = (
    "memory_tb_s",
    "fp32",
    "tf32",
    "fp16",
    "bf16",
    "fp16_acc16",
    "fp64",
    "memory_side_cache_mb",
)
"""The figures an entry may give, each a positive number (the last a size:
``DevicePeaks.memory_side_cache_mb``, which turns the memory-roof veto off)."""
REQUIRED_NEW = ("memory_tb_s", "fp32", "fp16", "bf16")
"""What an entry for a device not in the table must give (the rest may be absent)."""
TEXT_FIELDS = ("pattern", "source")


class PeaksFileError(ValueError):
    """A peaks file that cannot be used: one line naming the file and why."""


_cache: dict[tuple[str, float], tuple[DevicePeaks, ...]] = {}


def user_devices() -> tuple[DevicePeaks, ...]:
    """The entries of the file ``GEMMREG_PEAKS`` names (none when unset);
    PeaksFileError when it is unusable."""
    name = os.environ.get(PEAKS_ENV, "").strip()
    if not name:
        return ()
    path = Path(name)
    try:
        key = (str(path.resolve()), path.stat().st_mtime)
    except OSError as error:
        raise PeaksFileError(f"{PEAKS_ENV}={name}: {error.strerror or error}") from None
    if key not in _cache:
        _cache[key] = read(path)
    return _cache[key]


def read(path: Path) -> tuple[DevicePeaks, ...]:
    """A peaks file's entries, checked."""
    try:
        text = path.read_text(encoding="utf-8")
        data = _toml().loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise PeaksFileError(f"peaks file {path}: {_first_line(error)}") from None
    devices = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(devices, dict) or not devices:
        raise PeaksFileError(f'peaks file {path}: expected a non-empty "devices" table')
    return tuple(_entry(path, name, fields) for name, fields in devices.items())


def _entry(path: Path, name: str, fields: Any) -> DevicePeaks:
    where = f"peaks file {path}: device {name!r}"
    if not isinstance(fields, dict):
        raise PeaksFileError(f"{where}: expected a table of figures")
    unknown = sorted(set(fields) - set(RATE_FIELDS) - set(TEXT_FIELDS))
    if unknown:
        choices = ", ".join(RATE_FIELDS + TEXT_FIELDS)
        raise PeaksFileError(f"{where}: unknown field {unknown[0]!r} (known: {choices})")
    for field in RATE_FIELDS:
        value = fields.get(field)
        good = isinstance(value, (int, float)) and not isinstance(value, bool)
        if value is not None and not (good and math.isfinite(value) and value > 0):
            raise PeaksFileError(f"{where}: {field} must be a positive number, got {value!r}")
    for field in TEXT_FIELDS:
        if field in fields and not isinstance(fields[field], str):
            raise PeaksFileError(f"{where}: {field} must be a string")
    base = next((d for d in DEVICES if d.name == name), None)
    if base is None:
        missing = [f for f in REQUIRED_NEW if f not in fields]
        if missing:
            raise PeaksFileError(
                f"{where}: not in the datasheet table, so it needs {', '.join(REQUIRED_NEW)} "
                f"(missing {missing[0]})"
            )
        base = DevicePeaks(
            name=name,
            pattern=re.escape(name),
            source="",
            memory_tb_s=fields["memory_tb_s"],
            fp32=fields["fp32"],
            tf32=None,
            fp16=fields["fp16"],
            bf16=fields["bf16"],
        )
    pattern = fields.get("pattern", base.pattern)
    try:
        re.compile(pattern)
    except re.error as error:
        raise PeaksFileError(f"{where}: pattern {pattern!r}: {error}") from None
    given: dict[str, Any] = {f: float(fields[f]) for f in RATE_FIELDS if f in fields}
    over = f" over {base.source}" if base.source else ""
    given["source"] = fields.get("source") or f"user peaks file {path}{over}"
    return attrs.evolve(base, pattern=pattern, **given)


def _toml() -> Any:
    """Python's TOML reader (3.11 on), or tomli where it is installed."""
    import importlib

    for name in ("tomllib", "tomli"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ValueError("reading TOML needs Python 3.11 or the tomli package: give a JSON file")


def _first_line(error: Exception) -> str:
    text = str(getattr(error, "strerror", None) or error)
    return (text.splitlines() or [type(error).__name__])[0]
