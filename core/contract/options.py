"""What the user typed, checked before any work starts.

Every option is parsed into a value the core can use or refused with one line
that names the option and the problem. Digits are ASCII only: ``str.isdigit``
and the ``\\d`` of regular expressions also accept '²' and Arabic-Indic digits.
Bounds are named here so that ``--help`` and the refusals quote the same figures.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from gemmreg.contract.bad_input import (
    UsageError as UsageError,  # re-exported: its home for the options
)
from gemmreg.contract.bad_input import did_you_mean

MAX_PROCESSES = 64
"""Independent timing processes run one after another: more than this is a
mistyped number, not a more careful measurement."""
MAX_BUDGET_S = 86_400.0
"""Seconds a sequential run may spend on one point (``--budget``): a day is a
mistyped number, and the processes stop at
:data:`gemmreg.timing.sequential.MAX_PROCESSES` anyway."""
MAX_REPEATS = 100_000
"""Fixed timed samples per process; the adaptive rule stops at 2000."""
MAX_WARMUP = 100_000
"""Fixed warmup calls per process."""
MAX_TIME_S = 3600.0
"""Sampling cap per plugin and process, in seconds."""
MAX_TIMEOUT_S = 86_400.0
"""The longest ``--timeout`` a worker task may be given: a task that runs a
day is hung. Beyond about 2.1e6 s the limit no longer fits the millisecond
count the waits pass to the system (``OverflowError`` once timing began)."""
MAX_THRESHOLD_PCT = 1000.0
"""A regression threshold, in percent slowdown (1000%: 11x slower)."""
MAX_MARGIN_PCT = 50.0
"""An equivalence margin wider than this would call a 2x difference "equivalent"."""
MAX_SEED = 2**32 - 1
"""Seeds reach ``torch.Generator.manual_seed`` and ``random.Random``; 32 bits
keep them portable."""
MAX_SWEEP_POINTS = 1000
"""Shapes x dtypes in one ``bench``: a range with a step of 1 over a large span
would otherwise queue millions of points."""
MAX_DIGITS = 15
"""A matrix dimension with more digits than this is refused before it is even
converted (no device holds 10^15 elements in one row)."""

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DIMENSION = r"[ \t]*([0-9]+)[ \t]*"
_SHAPE = re.compile(rf"{_DIMENSION}[xX]{_DIMENSION}[xX]{_DIMENSION}")
_RANGE = re.compile(r"([0-9]+)[ \t]*:[ \t]*([0-9]+)[ \t]*:[ \t]*(\*?)[ \t]*([0-9]+)")

_Name = TypeVar("_Name", bound=str)


def integer(option: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: an ASCII integer in ``[low, high]``."""

    def parse(text: str) -> int:
        if not _INTEGER.fullmatch(text.strip()) or len(text.strip()) > MAX_DIGITS + 1:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {low} to {high}, got {text!r}"
            )
        value = int(text)
        wrong = integer_bounds(value, low, high)
        if wrong:
            raise argparse.ArgumentTypeError(wrong)
        return value

    parse.__name__ = option  # argparse names the type in some of its messages
    return parse


def integer_bounds(value: int, low: int, high: int) -> str | None:
    """Why ``value`` is outside ``[low, high]``, or None: the one wording of
    a bound, for an option typed on the command line and a keyword passed
    to the Python API (:mod:`gemmreg.commands.requests`)."""
    return None if low <= value <= high else f"must be from {low} to {high}, got {value}"


def number_bounds(value: float, low: float, high: float, low_open: bool = False) -> str | None:
    """Why the finite ``value`` is outside ``[low, high]`` (``(low, high]``
    with ``low_open``), or None: see :func:`integer_bounds`."""
    if value < low or value > high or (low_open and value == low):
        return f"must be {_span(low, high, low_open)}, got {value:g}"
    return None


def _span(low: float, high: float, low_open: bool) -> str:
    return f"{'above' if low_open else 'from'} {low:g}{' up' if low_open else ''} to {high:g}"


DECIMAL = re.compile(
    r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)", re.I
)
"""A number as a user writes one: ASCII digits, a point, an exponent (and the
names of the non-finite values, so that they are refused by name). Python's
``float`` also takes ``1_0`` (10) and Unicode digits, which are typos here."""


def decimal(text: str) -> float:
    """``text`` as a float where it is written as :data:`DECIMAL` allows
    (spaces and tabs around it), else NaN."""
    stripped = text.strip(" \t")
    return float(stripped) if DECIMAL.fullmatch(stripped) else math.nan


def number(
    option: str, low: float, high: float, *, low_open: bool = False
) -> Callable[[str], float]:
    """An argparse ``type``: a finite number in ``[low, high]`` (``(low, high]``
    with ``low_open``). ``nan`` compares false with everything, so it is refused
    by name: a NaN threshold would switch regression detection off."""
    where = _span(low, high, low_open)

    def parse(text: str) -> float:
        value = decimal(text)
        if math.isnan(value) and text.strip().lower() not in ("nan", "+nan", "-nan"):
            raise argparse.ArgumentTypeError(f"expected a number {where}, got {text!r}")
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number {where}, got {text!r}")
        wrong = number_bounds(value, low, high, low_open)
        if wrong:
            raise argparse.ArgumentTypeError(wrong)
        return value

    parse.__name__ = option
    return parse


def path(option: str, what: str = "a directory") -> Callable[[str], Path]:
    """An argparse ``type``: a path, never empty (``Path("")`` would be ``.``)."""

    def parse(text: str) -> Path:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"is empty: name {what}")
        return Path(text)

    parse.__name__ = option
    return parse


def _dimensions(groups: Sequence[str], text: str, what: str) -> tuple[int, ...]:
    if any(len(g) > MAX_DIGITS for g in groups):
        raise UsageError(f"{what} {text!r}: a dimension has more than {MAX_DIGITS} digits")
    return tuple(int(g) for g in groups)


def parse_shape(text: str) -> tuple[int, int, int]:
    """``MxNxK`` with positive ASCII integers."""
    match = _SHAPE.fullmatch(text)
    if not match:
        raise UsageError(
            f"malformed shape {text!r}: expected MxNxK with positive integers, e.g. 512x512x512"
        )
    m, n, k = _dimensions(match.groups(), text, "shape")
    if min(m, n, k) < 1:
        raise UsageError(f"malformed shape {text!r}: every dimension must be at least 1")
    return m, n, k


def parse_range(item: str, where: str = "range", unit: str = "sizes") -> list[int]:
    """``START:STOP:STEP`` (arithmetic) or ``START:STOP:*FACTOR`` (geometric),
    inclusive of STOP when a step lands on it: the sizes of one dimension."""
    match = _RANGE.fullmatch(item)
    if not match:
        raise UsageError(
            f"malformed {where} {item!r}: expected START:STOP:STEP or START:STOP:*FACTOR, "
            "e.g. 256:4096:256 or 256:4096:*2"
        )
    start, stop, step = _dimensions(match.group(1, 2, 4), item, where)
    geometric = match.group(3) == "*"
    if start < 1 or stop < start or step < (2 if geometric else 1):
        need = "FACTOR >= 2" if geometric else "STEP >= 1"
        raise UsageError(f"malformed {where} {item!r}: need 1 <= START <= STOP and {need}")
    if not geometric:
        if (stop - start) // step + 1 > MAX_SWEEP_POINTS:
            raise UsageError(f"{where} {item!r} makes more than {MAX_SWEEP_POINTS} {unit}")
        return list(range(start, stop + 1, step))
    sizes = [start]
    while sizes[-1] * step <= stop:  # at most log2(10^15) ~ 50 sizes
        sizes.append(sizes[-1] * step)
    return sizes


def _malformed(item: str) -> UsageError:
    return UsageError(
        f"malformed shape {item!r}: expected MxNxK where each of M, N, K is a size "
        "or a range START:STOP:STEP (or START:STOP:*FACTOR), e.g. 512x512x512 or "
        "1024:4096:1024x4096x512:2048:*2"
    )


def _sizes(text: str, item: str) -> list[int]:
    """One dimension of a shape: a size, or a range of sizes."""
    if ":" in text:
        return parse_range(text.strip(), "range")
    if not re.fullmatch(_DIMENSION, text):
        raise _malformed(item)
    (size,) = _dimensions([text.strip()], item, "shape")
    if size < 1:
        raise UsageError(f"malformed shape {item!r}: every dimension must be at least 1")
    return [size]


def _shape_item(item: str) -> list[tuple[int, int, int]]:
    """One comma-separated item of ``--shape``: a square ``N``, a range of
    squares, or ``MxNxK`` with per-dimension ranges (their cartesian product,
    M outermost)."""
    if re.fullmatch(_DIMENSION, item):
        (size,) = _dimensions([item.strip()], item, "shape")
        if size < 1:
            raise UsageError(f"malformed shape {item!r}: a square needs a size of at least 1")
        return [(size, size, size)]
    parts = re.split("[xX]", item)
    if len(parts) == 1 and ":" in item:
        return [(n, n, n) for n in parse_range(item.strip(), "range", "shapes")]
    if len(parts) != 3:
        raise _malformed(item)
    ms, ns, ks = (_sizes(part, item) for part in parts)
    if len(ms) * len(ns) * len(ks) > MAX_SWEEP_POINTS:
        raise UsageError(f"shape {item!r} makes more than {MAX_SWEEP_POINTS} shapes")
    return [(m, n, k) for m in ms for n in ns for k in ks]


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    """A comma-separated list of ``512x512x512``, ``1024`` (a square),
    ``256:1024:256`` or ``256:4096:*2`` (squares, inclusive), and shapes with
    per-dimension ranges such as ``1024:4096:1024x4096x512:2048:*2``."""
    shapes: list[tuple[int, int, int]] = []
    for item in (part.strip() for part in text.split(",")):
        shapes += _shape_item(item)
        if len(shapes) > MAX_SWEEP_POINTS:
            raise UsageError(f"--shape {text!r} makes more than {MAX_SWEEP_POINTS} shapes")
    return shapes


def choices(value: str | None, allowed: Sequence[_Name], what: str, option: str) -> list[_Name]:
    """A comma-separated option checked against ``allowed``; absent means all of
    them, but an empty value is an error (it is never silently the default).
    The names come back as ``allowed`` spells them (typed as its members)."""
    if value is None:
        return list(allowed)
    chosen = [v.strip() for v in value.split(",")]
    if not value.strip() or not all(chosen):
        raise UsageError(
            f"{option} {value!r} names an empty {what}: choose from {', '.join(allowed)}"
        )
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise UsageError(
            f"unknown {what} {', '.join(repr(v) for v in unknown)}: choose from {', '.join(allowed)}"
            + did_you_mean(unknown[0], allowed)
        )
    if len(set(chosen)) != len(chosen):
        raise UsageError(f"{option} {value!r} names a {what} twice")
    spelled: dict[str, _Name] = {name: name for name in allowed}
    return [spelled[name] for name in chosen]


def writable_directory(path: Path, option: str) -> None:
    """Refuse ``path`` now, not after the run, unless it is (or can be made) a
    directory we can write into: it is created and a probe file written and removed."""
    try:
        if path.exists() and not path.is_dir():
            raise UsageError(f"{option} {str(path)!r} exists and is not a directory")
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".gemmreg-probe-")
        os.close(fd)
        os.unlink(probe)
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise UsageError(f"{option} {str(path)!r}: cannot write there: {reason}") from None
