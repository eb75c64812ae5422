"""Records to JSON and back, saved documents' schema versions, and files
written whole or not at all.

Saved runs and checks, and the tasks and results that cross the worker
boundary, all go through here: :func:`to_jsonable` one way,
:func:`from_jsonable` the other, so no record has a reader of its own to
keep in step with its fields. Storage and presentation both write through
this module, so neither needs the other for it.
"""

from __future__ import annotations

import collections.abc
import functools
import json
import math
import os
import tempfile
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias, TypeVar, overload

import attrs

T = TypeVar("T")

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
"""A value as :func:`parse_json` reads it: what a saved document holds before
it is checked against the records it must rebuild."""

SCHEMA_KEY = "schema"
"""The key of a saved document's schema version (``check.json``, ``run.json``)."""
NON_FINITE_TEXT = ("nan", "-nan", "inf", "-inf", "infinity", "-infinity")
"""How a non-finite float is written (JSON has none): :func:`to_jsonable`
writes ``str(x)``; :func:`from_jsonable` reads it back where a float belongs."""


OMITTED_WHEN = "gemmreg_omitted_when"
"""A record field's metadata key: a predicate of the record that, when true,
leaves the field out of what :func:`to_jsonable` writes (a field added later,
written only where it says something, so older records are saved as they
were; :func:`from_jsonable` gives it its default back)."""


class NewerSchemaError(ValueError):
    """A saved document from a newer gemmreg than this one: one line, naming both."""


@overload
def to_jsonable(value: attrs.AttrsInstance) -> dict[str, object]: ...
@overload
def to_jsonable(value: object) -> object: ...


def to_jsonable(value: object) -> object:
    fields = _fields(value)
    if fields is not None:
        return to_jsonable(fields)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


@overload
def plain(value: attrs.AttrsInstance) -> dict[str, object]: ...
@overload
def plain(value: object) -> object: ...


def plain(value: object) -> object:
    """Records as plain dicts and lists, as JSON reads them back, numbers as
    they are: what a record kept as free-form data holds (a comparison in a
    check case, a precheck in a timing run)."""
    fields = _fields(value)
    if fields is not None:
        return plain(fields)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _fields(value: object) -> dict[str, object] | None:
    """An attrs record's fields by name, as ``attrs.asdict(recurse=False)``
    gives them; None for anything else."""
    cls = type(value)
    if not attrs.has(cls):
        return None
    return {
        field.name: getattr(value, field.name)
        for field in attrs.fields(cls)
        if not field.metadata.get(OMITTED_WHEN, _never)(value)
    }


def _never(record: object) -> bool:
    return False


def dumps(value: object) -> str:
    return json.dumps(to_jsonable(value), indent=2, sort_keys=False)


def document(schema: int, body: Mapping[str, object]) -> str:
    """A saved document: its schema version first, then ``body``."""
    return dumps({SCHEMA_KEY: schema, **body})


def schema_of(data: Mapping[str, object], newest: int, absent: int = 1) -> int:
    """The schema version of a parsed document (``absent`` for files saved
    before they carried one): :class:`NewerSchemaError` for a newer one than
    ``newest``, ValueError for anything but a version number."""
    schema = data.get(SCHEMA_KEY, absent)
    refuse_newer(schema, newest)
    if isinstance(schema, bool) or not isinstance(schema, int) or schema < 1:
        raise ValueError(f"schema {schema!r} is not one this gemmreg reads")
    return schema


def refuse_newer(schema: object, newest: int) -> None:
    """:class:`NewerSchemaError` when ``schema`` is a version after ``newest``."""
    if isinstance(schema, int) and not isinstance(schema, bool) and schema > newest:
        raise NewerSchemaError(
            f"schema {schema} is not one this gemmreg reads (it reads up to {newest}; "
            "the file was written by a newer gemmreg)"
        )


def parse_json(text: str) -> JSON:
    """JSON text, with NaN and Infinity (which JSON lacks, but Python reads)
    kept as text, so that a schema check refuses them like the writer's "nan"."""
    parsed: JSON = json.loads(text, parse_constant=str)  # JSON's values, and no others
    return parsed


def from_jsonable(cls: type[T], data: object) -> T:
    """Rebuild the attrs record ``cls`` from what :func:`to_jsonable` made of
    it, field by field, by the fields' annotations: nested records, tuples,
    and non-finite floats written as text. Nothing is checked beyond what the
    records' own constructors check (saved files are checked first, by
    :mod:`gemmreg.reporting.run_schema`)."""
    return typing.cast(T, _structure(cls, data))


@functools.cache
def _hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


def _structure(annotation: object, value: Any) -> object:
    # ``value`` is whatever the saved document holds there: walked by the
    # annotation, trusting the schema check (or the writer) for its shape.
    if annotation is Any or value is None:
        return value
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        records = [a for a in options if attrs.has(a)]
        if len(options) == 1 or (records and isinstance(value, dict)):
            return _structure((records or options)[0], value)
        return _structure(float, value) if float in options else value
    if annotation is float:
        if isinstance(value, str) and value.strip().lower() in NON_FINITE_TEXT:
            return float(value)
        return value
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_structure(args[0], item) for item in value)
        items = args or (Any,) * len(value)
        return tuple(_structure(a, item) for a, item in zip(items, value, strict=True))
    if origin in (list, collections.abc.Sequence):
        return [_structure(args[0] if args else Any, item) for item in value]
    if origin in (dict, collections.abc.Mapping):
        item = args[1] if args else Any
        return {key: _structure(item, v) for key, v in value.items()}
    if isinstance(annotation, type) and attrs.has(annotation) and isinstance(value, dict):
        hints = _hints(annotation)
        return annotation(**{k: _structure(hints.get(k, Any), v) for k, v in value.items()})
    return value


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder, flushed to the disk
    (fsync) before a rename, so neither a crash nor a power cut leaves half a
    file: the name holds the old text or the new, and a full disk fails here,
    on the temporary file, with the old file untouched."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes 0600; evidence is for sharing
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    sync_directory(path.parent)


def sync_directory(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to the disk, where the
    system allows a folder to be opened for that (not every one does)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
