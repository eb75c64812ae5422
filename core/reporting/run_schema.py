"""A saved run's JSON, checked against the records it must rebuild.

``run.json`` is input like any other: it may be hand-edited, truncated or from
another version. Rather than a schema kept beside the records (and soon out of
step with them), each value is checked against the type annotation of the
attrs field it fills: objects, lists, strings, booleans and numbers where the
record says so, no unknown or missing fields, every number finite, and every
time (a field named ``*_ms`` or ``*_s``) non-negative. The first problem is
reported with where it is, e.g. ``reports[0].runs[3].samples_ms[7]``.
"""

from __future__ import annotations

import functools
import math
import types
import typing
from typing import Any

import attrs

MAX_INT = 2**63 - 1
"""The largest integer a run holds (counts, sizes, seeds): JSON has no bound,
and a float conversion of a longer one overflows."""
TIME_SUFFIXES = ("_ms", "_s")
"""Fields holding durations, which can never be negative."""
NON_FINITE = ("nan", "inf", "infinity")
"""How non-finite numbers reach a run: the writer's strings, or JSON's NaN and
Infinity, which Python reads and :func:`gemmreg.reporting.runs.load_run` keeps as text."""


class SchemaError(ValueError):
    """A value that does not fit its record: ``where`` and what is wrong."""


def check_run(data: object, report_type: type) -> None:
    """The whole of ``run.json``: an object whose ``reports`` each fit ``report_type``."""
    if not isinstance(data, dict):
        raise SchemaError(f"expected a JSON object at the top, got {_kind(data)}")
    if "reports" not in data:
        raise SchemaError("no 'reports'")
    reports = data["reports"]
    if not isinstance(reports, list) or not reports:
        raise SchemaError(f"'reports' must be a non-empty list, got {_kind(reports)}")
    if not isinstance(data.get("manifest", {}), dict):
        raise SchemaError(f"'manifest' must be an object, got {_kind(data['manifest'])}")
    if not isinstance(data.get("partial", False), bool):
        raise SchemaError(f"'partial' must be true or false, got {_kind(data['partial'])}")
    for index, report in enumerate(reports):
        check_record(report_type, report, f"reports[{index}]")


def check_record(cls: type, data: object, where: str) -> dict[str, object]:
    """``data`` can build the attrs class ``cls``: same fields, right types.
    Returns ``data``, now known to be an object."""
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: expected an object, got {_kind(data)}")
    fields = {f.name: f for f in attrs.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise SchemaError(f"{where}: unknown field {unknown[0]!r}")
    missing = [n for n, f in fields.items() if f.default is attrs.NOTHING and n not in data]
    if missing:
        raise SchemaError(f"{where}: missing field {missing[0]!r}")
    hints = _hints(cls)
    for name, value in data.items():
        _check(hints.get(name, Any), value, f"{where}.{name}", name.endswith(TIME_SUFFIXES))
    return data


@functools.cache
def _hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


def _check(annotation: object, value: object, where: str, is_time: bool) -> None:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Any:
        return
    if origin in (typing.Union, types.UnionType):
        _check_union(args, value, where, is_time)
    elif annotation is type(None):
        if value is not None:
            raise SchemaError(f"{where}: expected null, got {_kind(value)}")
    elif origin is typing.Literal:
        if value not in args:
            choices = ", ".join(repr(a) for a in args)
            raise SchemaError(f"{where}: expected one of {choices}, got {_show(value)}")
    elif annotation is bool:
        if not isinstance(value, bool):
            raise SchemaError(f"{where}: expected true or false, got {_kind(value)}")
    elif annotation in (int, float):
        _check_number(annotation, value, where, is_time)
    elif annotation is str:
        if not isinstance(value, str):
            raise SchemaError(f"{where}: expected a string, got {_kind(value)}")
    elif origin in (tuple, list, set, frozenset):
        _check_sequence(args, value, where, is_time)
    elif origin is dict:
        if not isinstance(value, dict):
            raise SchemaError(f"{where}: expected an object, got {_kind(value)}")
        for key, item in value.items():
            _check(args[1] if args else Any, item, f"{where}.{key}", is_time)
    elif isinstance(annotation, type) and attrs.has(annotation):
        check_record(annotation, value, where)
    # Anything else is an annotation this checker does not know: the record's
    # own constructor still has its say.


def _check_union(args: tuple[object, ...], value: object, where: str, is_time: bool) -> None:
    if value is None and type(None) in args:
        return
    errors = []
    for alternative in (a for a in args if a is not type(None)):
        try:
            _check(alternative, value, where, is_time)
            return
        except SchemaError as error:
            errors.append(error)
    raise errors[0] if len(errors) == 1 else SchemaError(f"{where}: unexpected {_kind(value)}")


def _check_number(annotation: object, value: object, where: str, is_time: bool) -> None:
    if isinstance(value, str) and value.strip().lower().lstrip("+-") in NON_FINITE:
        raise SchemaError(f"{where}: must be a finite number, got {value!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        expected = "an integer" if annotation is int else "a number"
        raise SchemaError(f"{where}: expected {expected}, got {_kind(value)}")
    if annotation is int and not isinstance(value, int):
        raise SchemaError(f"{where}: expected an integer, got {value!r}")
    if isinstance(value, int) and abs(value) > MAX_INT:  # math.isfinite would overflow
        raise SchemaError(f"{where}: {_show(value)} is out of range (a 64-bit integer)")
    if not math.isfinite(value):
        raise SchemaError(f"{where}: must be a finite number, got {value!r}")
    if is_time and value < 0:
        raise SchemaError(f"{where}: a time cannot be negative, got {value!r}")


def _check_sequence(args: tuple[object, ...], value: object, where: str, is_time: bool) -> None:
    if not isinstance(value, list):
        raise SchemaError(f"{where}: expected a list, got {_kind(value)}")
    if (len(args) == 2 and args[1] is Ellipsis) or len(args) == 1:
        item_types = [args[0]] * len(value)
    elif args:
        if len(value) != len(args):
            raise SchemaError(f"{where}: expected {len(args)} items, got {len(value)}")
        item_types = list(args)
    else:
        item_types = [Any] * len(value)
    for index, (item_type, item) in enumerate(zip(item_types, value, strict=True)):
        _check(item_type, item, f"{where}[{index}]", is_time)


def _kind(value: object) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if type(value) in kinds:
        return f"{kinds[type(value)]} ({_show(value)})"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return type(value).__name__


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
