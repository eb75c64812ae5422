"""The formats are a registry (:mod:`gemmreg.reporting.formats`): a format is
one formatter, registered by name, and every command asks it how to write
rather than testing the name. A format defined here, in the test alone,
serves every command that prints rows, and ``--format`` offers it for as
long as it is registered."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import ClassVar

import pytest
from gemmreg.cli import build_parser
from gemmreg.contract.options import UsageError
from gemmreg.reporting import formats
from gemmreg.reporting.formats import FORMATS, Cell, Document, DocumentFormatter, Writes
from offline_cli import run_main
from test_formats import COMMANDS, replayed  # noqa: F401 (replayed: a fixture)


def _field(value: Cell) -> str:
    """A TSV field: tabs and line breaks escaped, as the IANA TSV convention has it."""
    text = "" if value is None else str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


class TabSeparated(DocumentFormatter):
    """A document of rows, tab-separated: a header line, then a line per row."""

    name: ClassVar[str] = "tsv"
    writes: ClassVar[Writes] = "rows"

    def document(self, document: Document) -> str:
        header = "\t".join(document.columns)
        lines = ["\t".join(_field(row.get(c)) for c in document.columns) for row in document.rows()]
        return "\n".join([header, *lines])


@pytest.fixture
def tsv() -> Iterator[None]:
    formats.register(TabSeparated)
    try:
        yield
    finally:
        formats.unregister(TabSeparated.name)


@pytest.mark.usefixtures("replayed")
@pytest.mark.parametrize("command", COMMANDS)
def test_a_format_defined_in_a_test_serves_every_command(command, tsv, tmp_path, capsys):
    """The same rows as ``--format csv``, tab-separated; its stdout the
    document alone (the notes a table prints go to stderr, as with csv)."""
    args = COMMANDS[command][0]
    out = ["--out", str(tmp_path / "tsv")] if command == "bench" else []
    done = run_main([*args, *out, "--format", "tsv"], capsys)
    assert done.code in (0, 1), done.err  # 1: a saved check with failures in it
    out = ["--out", str(tmp_path / "csv")] if command == "bench" else []
    as_csv = run_main([*args, *out, "--format", "csv"], capsys)
    expected = [[_field(v) for v in row] for row in csv.reader(as_csv.out.splitlines())]
    found = [line.split("\t") for line in done.out.splitlines()]
    assert len(found) > 1 and found == expected


def test_format_offers_a_registered_format_for_as_long_as_it_is_registered():
    with pytest.raises(UsageError, match="invalid choice: 'tsv'"):
        build_parser().parse_args(["list", "--format", "tsv"])
    formats.register(TabSeparated)
    try:
        assert list(FORMATS) == ["table", "markdown", "csv", "json", "tsv"]
        assert build_parser().parse_args(["list", "--format", "tsv"]).format == "tsv"
        with pytest.raises(ValueError, match="registered already"):
            formats.register(TabSeparated)
    finally:
        formats.unregister(TabSeparated.name)
    assert "tsv" not in FORMATS and list(FORMATS) == ["table", "markdown", "csv", "json"]


def test_the_default_is_the_terminal_table_and_an_unknown_name_is_refused():
    assert FORMATS[0] == formats.default() == "table"
    assert [formats.get(name).writes for name in FORMATS] == ["text", "text", "rows", "records"]
    with pytest.raises(ValueError, match="unknown format 'tsv' \\(known: table, markdown"):
        formats.get("tsv")


def test_a_document_format_writes_text_as_the_default_format_does():
    """Where a command prints text in a document format anyway (a sweep
    whose save failed), it is the terminal's table."""
    rows, headers = [["a", 1.5]], ["x", "y"]
    table = formats.get("table").table(rows, headers)
    assert (
        formats.get("csv").table(rows, headers) == table == formats.get("json").table(rows, headers)
    )
