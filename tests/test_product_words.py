"""The product speaks of itself: code, docs and tests say what a thing does and
why, with a date or a version where history matters, never which numbered
work session or tracker issue brought it. A reader of the repository has
neither; "saved before the stream hold existed" tells them what the number
did not.

Text inside an ``evidence/...`` path is not prose: the folders keep the names
they were recorded under. ``CHANGELOG.md`` and ``evidence/`` (records of how
things went) are not scanned."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from conftest import REPO

SCANNED = ("core", "plugins", "tests", "scripts", "examples", "docs", "README.md")
"""The product: its code, its docs and its tests, from the repository root."""
SKIPPED_DIRS = frozenset({"__pycache__", "build", "dist", "node_modules"})
"""Build outputs and caches, besides hidden folders and ``*.egg-info``."""
WORDS = re.compile(r"\b(?:sessions?|issues?)\s+(?:[0-9]|\")", re.IGNORECASE)
"""A numbered session or issue ("issue" then a number), or an issue by its
quoted title; across a line break too, as prose wraps."""
EVIDENCE_PATH = re.compile(r"evidence/[^\s`'\")\]>,;]*")
"""A path into ``evidence/``: blanked before matching, its length kept so
that line numbers stay right."""


def _files(roots: Iterable[str]) -> Iterator[Path]:
    for name in roots:
        root = REPO / name
        if root.is_file():
            yield root
            continue
        for path in sorted(root.rglob("*")):
            parts = path.relative_to(REPO).parts
            if any(
                p.startswith(".") or p in SKIPPED_DIRS or p.endswith(".egg-info") for p in parts
            ):
                continue
            if path.is_file():
                yield path


def offences(text: str) -> list[int]:
    """The line numbers (from 1) where ``text`` names a session or an issue."""
    prose = EVIDENCE_PATH.sub(lambda m: " " * len(m.group()), text)
    return [prose.count("\n", 0, m.start()) + 1 for m in WORDS.finditer(prose)]


def offending_lines(paths: Iterable[Path]) -> list[str]:
    """``file:line: text`` for every place that names a session or an issue."""
    found = []
    for path in paths:
        data = path.read_bytes()
        if b"\0" in data:  # binary
            continue
        text = data.decode("utf-8", errors="replace")
        lines = text.splitlines()
        where = path.relative_to(REPO).as_posix()
        found += [f"{where}:{n}: {lines[n - 1].strip()}" for n in offences(text)]
    return found


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        # spelled in two parts, so that this file passes its own scan
        ("as gemmreg did before session" + " 15", [1]),
        ("Issue" + " 12, items 7, 8 and 10", [1]),
        ("a first line\nin SESSION\n16's probe", [2]),
        ("the issue" + ' "Verdicts that cannot be fooled"', [1]),
        ("(``evidence/2026-12-02-h200-session16/r2``)", []),
        ("evidence/2026-11-30-h200-session7/c5/g1/tf32/verdicts.txt", []),
        ("a worker session ends; one issue per refused plugin", []),
        ("runs saved before the stream hold existed", []),
    ],
)
def test_what_the_scan_catches_and_what_it_leaves(text, lines):
    assert offences(text) == lines


def test_code_docs_and_tests_never_name_a_session_or_an_issue():
    paths = list(_files(SCANNED))
    assert len(paths) > 100, "the scan found too few files: wrong root?"
    found = offending_lines(paths)
    assert not found, "say what and why, not which session or issue:\n" + "\n".join(found)
