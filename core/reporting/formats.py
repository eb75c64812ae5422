"""The output formats every command that prints rows offers (``--format``):
a registry of formatters, one per format, each defined in one module
``gemmreg.reporting.format_<name>`` that registers it. A renderer asks the
formatter, never the format's name, how to write its output, so that
``--format csv`` means the same thing in ``list`` as in ``report`` and a new
format is one module (plus its test), found here by its file name.

A format writes either **text** laid out for reading (``table``,
``markdown``: tables, headings, notes, legends) or one **document** that
stdout holds alone (progress, notes and warnings go to stderr, or are left
out): of flat **rows** (``csv``) or of the **records** whole (``json``).
docs/formats.md says what each one looks like.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import ClassVar, Literal, TypeAlias, TypeVar, overload

import attrs
from gemmreg.contract.prefixed_modules import import_prefixed

Cell: TypeAlias = str | int | float | bool | None
"""One value of a row: a table's cell, or a CSV field (None: empty)."""
Row: TypeAlias = Mapping[str, Cell]
"""A flat row of a document of rows, by column."""
Writes: TypeAlias = Literal["text", "rows", "records"]
"""What a format writes: text for reading, or a document of rows or of records."""
FORMAT_MODULE_PREFIX = "format_"
"""A module of :mod:`gemmreg.reporting` named so defines (and registers) a format."""


@attrs.frozen(kw_only=True)
class Document:
    """An output as a document format takes it: its rows (with their columns)
    for a format of rows, its records under ``kind`` and ``schema`` for a
    format of records. Each is built only when a format asks for it."""

    kind: str
    """What the document holds: ``run``, ``check``, ... (``gemmreg.<kind>`` in JSON)."""
    schema: int
    """The version of the records' layout."""
    records: Callable[[], Mapping[str, object]]
    rows: Callable[[], Sequence[Row]]
    columns: Sequence[str]


class Formatter(abc.ABC):
    """How one format writes: a document from records, or text laid out
    from tables, headings and notes (a renderer builds the text around them:
    legends and verdict lines read the same in every text format)."""

    name: ClassVar[str]
    """What ``--format`` takes."""
    rank: ClassVar[int] = 100
    """Its place among ``--format``'s choices (the first is the default)."""
    writes: ClassVar[Writes] = "text"
    table_apart: ClassVar[bool] = False
    """A table needs a blank line between it and the lines around it."""

    @property
    def document_only(self) -> bool:
        """Stdout holds the document alone: text besides it goes to stderr."""
        return self.writes != "text"

    def document(self, document: Document) -> str | None:
        """The whole output, written from the records alone; None for a text
        format, whose output the renderer lays out with the methods below."""
        return None

    @abc.abstractmethod
    def table(
        self,
        rows: Sequence[Sequence[Cell]],
        headers: Sequence[str],
        widths: Sequence[int | None] | None = None,
    ) -> str:
        """A table. ``widths``: the widest each column may be before its
        cells wrap, where the format wraps cells at all."""

    @abc.abstractmethod
    def heading(self, title: str) -> str:
        """A title over a table (a device model's part of a history)."""

    @abc.abstractmethod
    def section(self, title: str) -> str:
        """The heading of one part of an output split by device model, set
        apart from the table above it (``on MODEL (N points)``)."""

    @abc.abstractmethod
    def note(self, line: str) -> str:
        """A note under a table, one of several (a tolerance's reason)."""


class DocumentFormatter(Formatter):
    """A format whose output is one document. It has no layout of its own
    for text: where a command prints text anyway (the points of a sweep
    whose save failed), it is the default format's."""

    writes: ClassVar[Writes] = "rows"

    @abc.abstractmethod
    def document(self, document: Document) -> str:
        """The document: of ``document.rows()`` or of ``document.records()``."""

    def table(
        self,
        rows: Sequence[Sequence[Cell]],
        headers: Sequence[str],
        widths: Sequence[int | None] | None = None,
    ) -> str:
        return get(default()).table(rows, headers, widths)

    def heading(self, title: str) -> str:
        return get(default()).heading(title)

    def section(self, title: str) -> str:
        return get(default()).section(title)

    def note(self, line: str) -> str:
        return get(default()).note(line)


_REGISTRY: dict[str, Formatter] = {}
F = TypeVar("F", bound=Formatter)


def register(cls: type[F]) -> type[F]:
    """Register the format ``cls`` defines (a class decorator, in its module)."""
    if cls.name in _REGISTRY:
        raise ValueError(f"format {cls.name!r} is registered already")
    _REGISTRY[cls.name] = cls()
    return cls


def unregister(name: str) -> None:
    """Take the format ``name`` out of the registry (a test's own format)."""
    del _REGISTRY[name]


def names() -> list[str]:
    """The registered formats, by rank: ``--format``'s choices."""
    return sorted(_REGISTRY, key=lambda name: _REGISTRY[name].rank)


def default() -> str:
    """The first of ``--format``'s choices: what a command prints unless told."""
    return names()[0]


def get(name: str) -> Formatter:
    """The formatter of ``name``; ValueError naming the known ones if none."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown format {name!r} (known: {', '.join(names())})")
    return _REGISTRY[name]


class _Names(Sequence[str]):
    """The registered formats as a sequence that follows the registry, so
    that a parser built after a format registers offers it too."""

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return names()[index]

    def __len__(self) -> int:
        return len(names())

    def __iter__(self) -> Iterator[str]:
        return iter(names())

    def __contains__(self, value: object) -> bool:
        return value in _REGISTRY

    def __repr__(self) -> str:
        return repr(tuple(names()))


FORMATS: Sequence[str] = _Names()
"""What ``--format`` takes, for every command that prints rows; the first is the default."""

# Every format_* module, each registering its format: a new format's module
# is found by its name, with no line here.
import_prefixed("gemmreg.reporting", FORMAT_MODULE_PREFIX)
