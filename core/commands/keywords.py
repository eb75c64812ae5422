"""The Python API's arguments (:mod:`gemmreg.api`), checked and parsed into
the vocabulary of the requests (:mod:`gemmreg.commands.requests`) as the
command line's options are: a shape as ``--shape`` spells it or as a tuple,
names one at a time or comma-separated as ``--dtype`` takes them, a folder.
Anything else is refused in one line (:class:`UsageError`), before any work."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from gemmreg.contract import options as opt
from gemmreg.contract.low_precision import FP8_OUT_DTYPES, FP8_SCALINGS
from gemmreg.contract.options import UsageError
from gemmreg.contract.records import BATCH_LAYOUTS, BatchLayout, OutDType, Scaling

Shape = str | tuple[int, int, int] | tuple[int, int]
"""``"MxNxK"`` (as ``--shape`` takes it) or ``(m, n, k)``; beside groups, ``"NxK"`` or ``(n, k)``."""
PathLike = str | os.PathLike[str]
Names = str | Sequence[str]
"""One name, or several (``"fp32,fp16"`` as the command line takes them, or a list)."""
_Name = TypeVar("_Name", bound=str)


def names(command: str, given: Sequence[str]) -> tuple[str, ...]:
    """A list of names (checked by the command); a lone string is refused:
    its letters are no plugins."""
    if isinstance(given, str) or not isinstance(given, Sequence):
        raise UsageError(f"{command} takes a list of plugin names, got {given!r}")
    return tuple(given)


def groups(given: object) -> tuple[int, ...]:
    """A grouped problem's member sizes, as ``--groups`` takes them
    (``"0,1,512"``) or a list; None: not grouped."""
    from gemmreg.contract.grouping import parse_sizes

    return () if given is None else parse_sizes(given, "groups")


def shape(given: Shape, sizes: tuple[int, ...] = ()) -> tuple[int, int, int]:
    """``"MxNxK"``, parsed as ``--shape`` is, or three positive integers;
    beside member ``sizes``, ``"NxK"`` or ``(n, k)`` (m: their sum)."""
    if sizes:
        return _grouped_shape(given, sizes)
    if isinstance(given, str):
        return opt.parse_shape(given)
    given_dims = given if isinstance(given, Sequence) else ()
    dims = [d for d in given_dims if isinstance(d, int) and not isinstance(d, bool)]
    if len(dims) != 3 or len(given_dims) != 3:
        raise UsageError(f"malformed shape {given!r}: expected (m, n, k) or 'MxNxK'")
    m, n, k = dims
    if min(m, n, k) < 1:
        raise UsageError(f"malformed shape {given!r}: every dimension must be at least 1")
    return m, n, k


def _grouped_shape(given: object, sizes: tuple[int, ...]) -> tuple[int, int, int]:
    from gemmreg.contract.grouping import ONE_SHAPE, parse_nk

    if isinstance(given, str):
        (n, k), *more = parse_nk(given, "shape")
        if more:
            raise UsageError(f"shape {given!r}: one NxK here")
        return sum(sizes), n, k
    dims = list(given) if isinstance(given, Sequence) else []
    if len(dims) != 2 or not all(type(d) is int and d > 0 for d in dims):
        raise UsageError(f"shape {given!r}: with groups, give (n, k) or 'NxK': {ONE_SHAPE}")
    return sum(sizes), dims[0], dims[1]


def shapes(given: str | Sequence[Shape], sizes: tuple[int, ...] = ()) -> list[tuple[int, int, int]]:
    """``bench``'s shapes: as ``--shape`` takes them, or a list of shapes
    (beside member ``sizes``, each ``NxK`` or ``(n, k)``)."""
    if isinstance(given, str) and sizes:
        from gemmreg.contract.grouping import parse_nk

        return [(sum(sizes), n, k) for n, k in parse_nk(given, "shape")]
    if isinstance(given, str):
        return opt.parse_shapes(given)
    if not isinstance(given, Sequence) or not given:
        raise UsageError(f"bench needs a list of shapes, got {given!r}")
    return [shape(one, sizes) for one in given]


def label(given: str | Sequence[Shape]) -> str:
    """The shapes as the run's manifest records them (``--shape``'s text)."""
    if isinstance(given, str):
        return given
    return ",".join(one if isinstance(one, str) else "x".join(map(str, one)) for one in given)


def many(value: Names | None, what: str, allowed: Sequence[_Name]) -> list[_Name]:
    """``"fp32,fp16"`` or ``["fp32", "fp16"]``; None: all of ``allowed``."""
    if value is not None and not isinstance(value, str):
        items = list(value)
        if not all(isinstance(item, str) for item in items):
            raise UsageError(f"{what}: expected names, got {value!r}")
        value = ",".join(items)
    return opt.choices(value, allowed, what.rstrip("s"), what)


def one(value: str, what: str, allowed: Sequence[_Name]) -> _Name:
    """``compare``'s one dtype or layout."""
    if not isinstance(value, str) or "," in value:
        raise UsageError(f"compare takes one {what}, got {value!r}")
    return many(value, what, allowed)[0]


def many_or_none(value: Names | None, what: str, allowed: Sequence[_Name]) -> list[_Name]:
    """The names given, or none (a request's "every one")."""
    return [] if value is None else many(value, what, allowed)


def fp8_out(value: str | None) -> OutDType | None:
    """An fp8 problem's C dtype, as ``--out-dtype``; None: the default."""
    return None if value is None else one(value, "out_dtype", FP8_OUT_DTYPES)


def fp8_scaling(value: str | None) -> Scaling | None:
    """An fp8 problem's scaling, as ``--scaling``; None: the default."""
    return None if value is None else one(value, "scaling", FP8_SCALINGS)


def batch(value: int) -> int:
    """A batch size as ``--batch`` takes one."""
    from gemmreg.commands.request_values import check_integer
    from gemmreg.contract.batching import MAX_BATCH

    check_integer(value, 1, MAX_BATCH, "batch")
    return value


def batch_layout(value: str) -> BatchLayout:
    """A batch layout as ``--batch-layout`` takes one."""
    return one(value, "batch_layout", BATCH_LAYOUTS)


def folder(path: PathLike | None, what: str) -> Path | None:
    """A folder's path; never empty (``Path("")`` would be the current one)."""
    if path is None:
        return None
    if not isinstance(path, str | os.PathLike) or not str(path).strip():
        raise UsageError(f"{what}: expected a directory's path, got {path!r}")
    return Path(path)


def flag(value: object, what: str) -> bool:
    """A switch keyword: True or False, nothing else (``"no"`` is truthy)."""
    if not isinstance(value, bool):
        raise UsageError(f"{what}: expected True or False, got {value!r}")
    return value


def call(name: str, first: str | Iterable[object], **given: object) -> str:
    """The call as its run's manifest records it, where the command line
    records the command typed."""
    shown = [repr(list(first) if not isinstance(first, str) else first)]
    shown += [
        f"{key}={value!r}"
        for key, value in given.items()
        if value is not None and value is not False
    ]
    return f"gemmreg.{name}({', '.join(shown)})"


TIMING_KEYWORDS = (
    "processes",
    "budget",
    "seed",
    "margin",
    "repeats",
    "warmup",
    "max_time",
    "timeout",
    "l2",
    "device_processes",
)
"""The timing keywords of ``compare``, ``bench`` and ``resume`` (the fields of
:class:`~gemmreg.commands.requests.TimingAsked`), in the order a manifest's
call records them."""


def timing(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The timing keywords among a call's ``arguments`` (its ``locals()``), by
    their option names: taken by name, so that no call can hand one keyword
    another's place, as ten positional arguments of one type could."""
    return {name: arguments[name] for name in TIMING_KEYWORDS}
