"""Imports point down the layers of :mod:`gemmreg.layers`, never round in a
cycle, and no core module grows past a screenful or two."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs
import pytest
from conftest import REPO
from gemmreg import layers

CORE = REPO / "core"
MAX_LINES = 320
"""About 300 lines a module, with a little slack for a docstring's growth."""
RECORDS_MAX_LINES = 300
"""The records a plugin author reads whole: held to the round figure."""


@attrs.frozen
class Import:
    module: str
    """The core module imported (``__init__`` for the package itself)."""
    line: int
    type_only: bool
    """Under ``if TYPE_CHECKING:``: named for the type checker, not imported at run time."""


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def core_imports(source: str, modules: frozenset[str]) -> list[Import]:
    """Every import of a core module in ``source``: at module level, inside
    functions and classes, and under ``TYPE_CHECKING`` (marked type-only)."""
    found: list[Import] = []

    def add(name: str, line: int, type_only: bool) -> None:
        found.append(Import(name, line, type_only))

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "gemmreg":
                    add(parts[1] if len(parts) > 1 else "__init__", node.lineno, type_only)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"line {node.lineno}: relative import"
            parts = (node.module or "").split(".")
            if parts[0] == "gemmreg" and len(parts) > 1:
                add(parts[1], node.lineno, type_only)
            elif parts == ["gemmreg"]:
                for alias in node.names:  # a submodule, or a name of the package itself
                    add(alias.name if alias.name in modules else "__init__", node.lineno, type_only)
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(ast.parse(source), False)
    return found


def core_modules() -> dict[str, Path]:
    return {path.stem: path for path in sorted(CORE.glob("*.py"))}


def import_graph() -> dict[str, list[Import]]:
    modules = core_modules()
    names = frozenset(modules)
    return {
        name: [i for i in core_imports(path.read_text(), names) if i.module != name]
        for name, path in modules.items()
    }


def upward_imports(graph: Mapping[str, list[Import]]) -> list[tuple[str, Import]]:
    """Imports from a layer above the importer's, type-only ones included:
    naming a type of a higher layer is depending on it all the same."""
    return [
        (name, i)
        for name, imports in graph.items()
        for i in imports
        if layers.layer_of(i.module) > layers.layer_of(name)
    ]


def cycles(graph: Mapping[str, list[Import]]) -> list[list[str]]:
    """Groups of modules that import each other round a cycle at run time
    (Tarjan's strongly connected components of the run-time import graph)."""
    edges = {
        name: sorted({i.module for i in imports if not i.type_only})
        for name, imports in graph.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in edges.get(node, ()):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


# ---------------------------------------------------------------------------
# The reader and the checks, on code written to break them
# ---------------------------------------------------------------------------


def test_the_reader_finds_every_kind_of_import():
    code = textwrap.dedent(
        """
        import gemmreg
        from gemmreg import stats, __version__
        from gemmreg.render import dumps
        import gemmreg.cli as command_line
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from gemmreg.runs import load_run
        def later():
            from gemmreg import comparing
        class Deep:
            def method(self):
                import gemmreg.worker
        """
    )
    found = core_imports(code, frozenset({"stats", "render", "cli", "runs", "comparing", "worker"}))
    assert [(i.module, i.line, i.type_only) for i in found] == [
        ("__init__", 2, False),
        ("stats", 3, False),
        ("__init__", 3, False),
        ("render", 4, False),
        ("cli", 5, False),
        ("runs", 8, True),
        ("comparing", 10, False),
        ("worker", 13, False),
    ]


def test_an_upward_import_and_a_cycle_are_caught(monkeypatch):
    monkeypatch.setattr(layers, "LAYERS", {"low": ("a", "b"), "high": ("c",)})
    graph = {
        "a": [Import("b", 1, False)],
        "b": [Import("a", 3, False), Import("c", 4, True)],
        "c": [Import("a", 1, False)],
    }
    assert upward_imports(graph) == [("b", Import("c", 4, True))]
    assert cycles(graph) == [["a", "b"]]
    graph["b"] = [Import("a", 3, True)]  # a type named for the checker only
    assert cycles(graph) == []


# ---------------------------------------------------------------------------
# The core
# ---------------------------------------------------------------------------


def test_every_core_module_is_in_one_layer_and_every_mapped_module_exists():
    mapped = [name for modules in layers.LAYERS.values() for name in modules]
    twice = sorted({name for name in mapped if mapped.count(name) > 1})
    assert not twice, f"in more than one layer: {twice}"
    modules = set(core_modules())
    assert not modules - set(mapped), (
        f"not in gemmreg.layers.LAYERS: {sorted(modules - set(mapped))}"
    )
    assert not set(mapped) - modules, f"no such module: {sorted(set(mapped) - modules)}"


def describe(name: str, i: Import) -> str:
    names = list(layers.LAYERS)
    return (
        f"core/{name}.py:{i.line} ({names[layers.layer_of(name)]}) imports "
        f"{i.module} ({names[layers.layer_of(i.module)]})"
    )


def test_no_core_module_imports_from_a_layer_above_its_own():
    graph = import_graph()
    upward = upward_imports(graph)
    allowed = layers.UPWARD_IMPORTS
    offenders = [describe(name, i) for name, i in upward if (name, i.module) not in allowed]
    assert not offenders, "\n".join(offenders)
    stale = set(allowed) - {(name, i.module) for name, i in upward}
    assert not stale, f"exemptions no longer needed: {sorted(stale)}"


def test_exemptions_are_few_and_say_why():
    assert len(layers.UPWARD_IMPORTS) <= 3
    assert all(len(reason.split()) >= 5 for reason in layers.UPWARD_IMPORTS.values())


def test_no_import_cycles_among_core_modules():
    assert cycles(import_graph()) == []


def line_counts() -> Iterator[tuple[str, int]]:
    for name, path in core_modules().items():
        yield name, len(path.read_text().splitlines())


def test_no_core_module_is_over_the_line_limit():
    over = {name: count for name, count in line_counts() if count > MAX_LINES}
    assert not over, f"over {MAX_LINES} lines: {over}"


def test_the_records_a_plugin_author_reads_stay_short():
    assert dict(line_counts())["records"] <= RECORDS_MAX_LINES


@pytest.mark.parametrize("layer", list(layers.LAYERS))
def test_every_layer_is_described_in_the_map_s_docstring(layer):
    assert f"**{layer}**" in (layers.__doc__ or "")


def test_the_layout_page_names_the_layers_in_their_order():
    page = " ".join((REPO / "docs" / "layout.md").read_text().split())
    assert ", ".join(layers.LAYERS) in page
