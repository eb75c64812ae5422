"""How a declaration is refused: the error a plugin sees, and the attrs
validators of the records in :mod:`gemmreg.contract.records`, each naming the record,
the kernel and the field, so that nonsense fails inside the plugin's own hook.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import attrs


class SpecError(ValueError):
    """A plugin declared something the core cannot use."""

    kernel: str = ""
    """The kernel whose declaration was refused, where known: asking for it by
    name then says why it is missing, not that it is unknown."""


class UnsupportedProblem(ValueError):
    """Raised by a kernel handed a problem outside its declared capabilities.

    The core never does this on purpose except to test that a plugin refuses
    clearly instead of computing garbage; ``Capabilities.require`` raises it.
    """


def _owner(instance: object) -> str:
    name = getattr(instance, "name", None)
    return f"{type(instance).__name__} {name!r}" if name else type(instance).__name__


def _fail(instance: object, attribute: attrs.Attribute, message: str) -> SpecError:
    error = SpecError(f"{_owner(instance)}: field '{attribute.name}': {message}")
    name = getattr(instance, "name", "")
    names_kernel = getattr(type(instance), "names_a_kernel", False)
    error.kernel = name if names_kernel and isinstance(name, str) else ""
    return error


def _positive(instance: object, attribute: attrs.Attribute, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise _fail(instance, attribute, f"must be a positive integer, got {value!r}")


def _member_of(choices: tuple[str, ...]) -> Callable[..., None]:
    def check(instance: object, attribute: attrs.Attribute, value: str) -> None:
        if value not in choices:
            raise _fail(instance, attribute, f"{value!r} is not one of {', '.join(choices)}")

    return check


def _non_negative_float(instance: object, attribute: attrs.Attribute, value: float) -> None:
    """A finite number, zero or more: an infinite bound (``atol=inf``) passes
    every output, NaN included, so it is no tolerance at all."""
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not value >= 0
        or not math.isfinite(value)
    ):
        raise _fail(instance, attribute, f"must be a finite, non-negative number, got {value!r}")


def _capability_set(choices: tuple[str, ...], may_be_empty: bool = False) -> Callable[..., None]:
    def check(instance: object, attribute: attrs.Attribute, value: frozenset[str]) -> None:
        if not value and not may_be_empty:
            raise _fail(instance, attribute, "must name at least one")
        unknown = sorted(set(value) - set(choices))
        if unknown:
            raise _fail(instance, attribute, f"unknown {unknown}; choose from {', '.join(choices)}")

    return check


def _instance_of(cls: type) -> Callable[..., None]:
    """A field that holds a ``cls`` record (a plugin passing a dict instead is told so)."""

    def check(instance: object, attribute: attrs.Attribute, value: object) -> None:
        if not isinstance(value, cls):
            raise _fail(
                instance, attribute, f"must be a {cls.__name__}, got {type(value).__name__}"
            )

    return check


def _optional_positive(instance: object, attribute: attrs.Attribute, value: int | None) -> None:
    if value is not None:
        _positive(instance, attribute, value)


def _tile(instance: object, attribute: attrs.Attribute, value: object) -> None:
    """A tile is None or (BLOCK_M, BLOCK_N, BLOCK_K), each positive."""
    if value is None:
        return
    if not (isinstance(value, tuple) and len(value) == 3):
        raise _fail(instance, attribute, f"must be (BLOCK_M, BLOCK_N, BLOCK_K), got {value!r}")
    for size in value:
        _positive(instance, attribute, size)


def _optional_callable(instance: object, attribute: attrs.Attribute, value: object) -> None:
    if value is not None and not callable(value):
        raise _fail(instance, attribute, f"must be callable or None, got {type(value).__name__}")


def _boolean(instance: object, attribute: attrs.Attribute, value: object) -> None:
    if not isinstance(value, bool):
        raise _fail(instance, attribute, f"must be True or False, got {value!r}")


def _required_callable(instance: object, attribute: attrs.Attribute, value: object) -> None:
    if not callable(value):
        raise _fail(instance, attribute, f"must be callable, got {type(value).__name__}")


def check_precision_mapping(
    instance: object,
    attribute: attrs.Attribute,
    value: dict,
    declared: Collection[str],
    known: tuple[str, ...],
    precision_type: type,
) -> None:
    """``Capabilities.precision``: a precision for every declared dtype, at
    least one, each a known dtype mapped to a ``precision_type``."""
    missing = sorted((set(declared) & set(known)) - set(value))  # unknown: the dtypes' error
    if missing:
        raise _fail(instance, attribute, f"no precision stated for declared dtypes {missing}")
    if not value:
        raise _fail(instance, attribute, "must state the math of at least one dtype")
    for dtype, precision in value.items():
        if dtype not in known:
            raise _fail(
                instance, attribute, f"unknown dtype {dtype!r}; choose from {', '.join(known)}"
            )
        if not isinstance(precision, precision_type):
            raise _fail(instance, attribute, f"precision for {dtype!r} must be a gemmreg.Precision")


def defining_file(prepare: Callable[..., object]) -> tuple[str, ...]:
    """The file of the module that defines ``prepare`` (through any
    ``functools.partial``), or nothing where it has none: a kernel's default
    ``sources``."""
    while isinstance(prepare, functools.partial):
        prepare = prepare.func
    module = sys.modules.get(getattr(prepare, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    return (path,) if isinstance(path, str) else ()


# Converters for the declaration records' fields. Typed on what a plugin
# writes (plain strings, sets, dicts), so that a plugin's own type checker
# accepts ``dtypes={"fp32"}`` or ``precision={"fp32": Precision(...)}``; the
# validators then hold each name to its vocabulary. (With ``frozenset`` or
# ``dict`` as converters, mypy asked plugins for the Literal types.)


def name_set(value: Iterable[str]) -> frozenset[Any]:
    """A set of names (dtypes, backends, layouts), validated by the field."""
    return frozenset(value)


def by_name(value: Mapping[Any, Any]) -> dict[Any, Any]:
    """A mapping keyed by names (dtypes), validated by the field (keys and
    values alike: a Mapping's key type is invariant, so ``str`` here would
    refuse a plugin's ``dict[DType, ...]``, and the value type is the
    field's validator's to check, with the field named in its SpecError)."""
    return dict(value)


def strings(value: Iterable[str]) -> tuple[str, ...]:
    """Strings in order (source paths, kernel names, field names): ``tuple``
    as a converter left mypy's attrs plugin asking for an unsolved type."""
    return tuple(value)
