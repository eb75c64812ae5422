"""A constant's docstring sits right under the constant it documents.

gemmreg documents module constants and record fields with the string under
each assignment (what Sphinx and editors show as its doc). Two strings in a
row mean one of them lost its constant: ``SMALLINT_RANGE``'s text once sat
under ``DRAW_ON_DEVICE_ABOVE``'s, saying the wrong thing of both.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest
from conftest import REPO

ROOTS = ("core", "plugins", "examples", "scripts", "tests")


def _is_text(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def strays(source: str) -> list[int]:
    """The lines of strings that follow another string in a module's or a
    class's body (a docstring with no constant of its own above it)."""
    tree = ast.parse(source)
    bodies = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    return sorted(
        after.lineno
        for body in bodies
        for before, after in itertools.pairwise(body)
        if _is_text(before) and _is_text(after)
    )


def test_the_reader_finds_a_docstring_that_lost_its_constant():
    source = 'A = 1\nB = 2\n"""of B"""\n"""of A, misplaced"""\n\nclass C:\n    x = 1\n    """x"""\n'
    assert strays(source) == [4]
    assert strays(source.replace('"""of A, misplaced"""\n', "")) == []


@pytest.mark.parametrize("root", ROOTS)
def test_every_docstring_follows_the_constant_it_documents(root: str):
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted(Path(REPO, root).rglob("*.py"))
        if "build" not in path.parts
        for line in strays(path.read_text())
    ]
    assert not found, f"a string under another string (its constant is missing): {found}"
