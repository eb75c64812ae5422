"""The folders of ``core/`` are the rooms of :mod:`gemmreg.contract.rooms`:
imports point down them, never round in a cycle, and no core module grows
past a screenful or two."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs
import pytest
from conftest import REPO
from gemmreg.contract import rooms

CORE = REPO / "core"
MAX_LINES = 320
"""About 300 lines a module, with a little slack for a docstring's growth."""
RECORDS_MAX_LINES = 300
"""The records a plugin author reads whole: held to the round figure."""
TOP_LEVEL_DATA = frozenset({"py.typed"})
"""Files directly in ``core/`` besides the public modules: the PEP 561 marker."""


@attrs.frozen
class Import:
    module: str
    """The core module imported, dotted below ``gemmreg`` (``timing.stats``;
    ``__init__`` for the package itself, ``timing`` for a subpackage's own)."""
    line: int
    type_only: bool
    """Under ``if TYPE_CHECKING:``: named for the type checker, not imported at run time."""


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _below_gemmreg(dotted: str) -> str | None:
    """``gemmreg.timing.stats`` -> ``timing.stats``, ``gemmreg`` -> ``""``, else None."""
    if dotted == "gemmreg":
        return ""
    return dotted.removeprefix("gemmreg.") if dotted.startswith("gemmreg.") else None


def core_imports(source: str, modules: frozenset[str]) -> list[Import]:
    """Every import of a core module in ``source``: at module level, inside
    functions and classes, and under ``TYPE_CHECKING`` (marked type-only)."""
    found: list[Import] = []

    def add(name: str, line: int, type_only: bool) -> None:
        found.append(Import(name or "__init__", line, type_only))

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                below = _below_gemmreg(alias.name)
                if below is not None:
                    add(below, node.lineno, type_only)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"line {node.lineno}: relative import"
            below = _below_gemmreg(node.module or "")
            if below is not None:
                for alias in node.names:  # a submodule, or a name of the package itself
                    inner = f"{below}.{alias.name}" if below else alias.name
                    add(inner if inner in modules else below, node.lineno, type_only)
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(ast.parse(source), False)
    return found


def module_name(path: Path) -> str:
    """``core/timing/stats.py`` -> ``timing.stats``; a subpackage's
    ``__init__.py`` -> its name; the top ``__init__.py`` -> ``__init__``."""
    parts = path.relative_to(CORE).with_suffix("").parts
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def core_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(CORE.rglob("*.py"))}


def import_graph() -> dict[str, list[Import]]:
    modules = core_modules()
    names = frozenset(modules)
    return {
        name: [i for i in core_imports(path.read_text(), names) if i.module != name]
        for name, path in modules.items()
    }


def upward_imports(graph: Mapping[str, list[Import]]) -> list[tuple[str, Import]]:
    """Imports from a room above the importer's, type-only ones included:
    naming a type of a higher room is depending on it all the same."""
    return [
        (name, i)
        for name, imports in graph.items()
        for i in imports
        if rooms.room_of(i.module) > rooms.room_of(name)
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
        from gemmreg import cli, __version__
        from gemmreg.reporting.render import dumps
        import gemmreg.cli as command_line
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from gemmreg.reporting.runs import load_run
        def later():
            from gemmreg.timing import comparing, TIMING_NAME
        class Deep:
            def method(self):
                import gemmreg.commands.worker
        """
    )
    modules = frozenset(
        {
            "cli",
            "reporting.render",
            "reporting.runs",
            "timing",
            "timing.comparing",
            "commands.worker",
        }
    )
    found = core_imports(code, modules)
    assert [(i.module, i.line, i.type_only) for i in found] == [
        ("__init__", 2, False),
        ("cli", 3, False),
        ("__init__", 3, False),
        ("reporting.render", 4, False),
        ("cli", 5, False),
        ("reporting.runs", 8, True),
        ("timing.comparing", 10, False),
        ("timing", 10, False),
        ("commands.worker", 13, False),
    ]


def test_a_module_s_name_and_room_come_from_its_folder():
    assert module_name(CORE / "timing" / "stats.py") == "timing.stats"
    assert module_name(CORE / "timing" / "__init__.py") == "timing"
    assert module_name(CORE / "__init__.py") == "__init__"
    assert rooms.room_of("timing.stats") == rooms.room_of("timing") == rooms.ROOMS.index("timing")
    assert rooms.room_of("cli") == rooms.ROOMS.index("commands")
    assert rooms.room_of("__init__") == 0
    for stray in ("stats", "tables.render"):
        with pytest.raises(KeyError):
            rooms.room_of(stray)


def test_an_upward_import_and_a_cycle_are_caught(monkeypatch):
    monkeypatch.setattr(rooms, "ROOMS", ("low", "high"))
    graph = {
        "low.a": [Import("low.b", 1, False)],
        "low.b": [Import("low.a", 3, False), Import("high.c", 4, True)],
        "high.c": [Import("low.a", 1, False)],
    }
    assert upward_imports(graph) == [("low.b", Import("high.c", 4, True))]
    assert cycles(graph) == [["low.a", "low.b"]]
    graph["low.b"] = [Import("low.a", 3, True)]  # a type named for the checker only
    assert cycles(graph) == []


# ---------------------------------------------------------------------------
# The core
# ---------------------------------------------------------------------------


def test_the_top_of_core_is_the_public_surface_only():
    top = {path.name for path in CORE.iterdir() if path.is_file()}
    public = {f"{name}.py" for name in rooms.PUBLIC_MODULES}
    assert not top - public - TOP_LEVEL_DATA, (
        f"directly in core/, not public: {sorted(top - public - TOP_LEVEL_DATA)} "
        "(move it into its room's folder, or name it in gemmreg.contract.rooms.PUBLIC_MODULES)"
    )
    assert not public - top, f"no such public module: {sorted(public - top)}"


def test_every_folder_of_core_is_a_room_and_every_room_a_folder():
    folders = {path.name for path in CORE.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders == set(rooms.ROOMS), (
        f"not a room: {sorted(folders - set(rooms.ROOMS))}; "
        f"no folder: {sorted(set(rooms.ROOMS) - folders)}"
    )
    deeper = [name for name in core_modules() if name.count(".") > 1]
    assert not deeper, f"a room holds modules, not folders: {deeper}"
    assert all(rooms.PUBLIC_MODULES[name] in rooms.ROOMS for name in rooms.PUBLIC_MODULES)
    assert set(rooms.BASE) < set(rooms.ROOMS)
    assert rooms.ROOMS[: len(rooms.BASE)] == rooms.BASE, "the base is the bottom of the rooms"


@pytest.mark.parametrize("room", rooms.ROOMS)
def test_a_room_s_own_module_says_what_it_is_and_imports_nothing(room):
    """A subpackage's ``__init__`` runs before any of its modules: an import
    there would cost every importer, and could point anywhere unseen."""
    init = CORE / room / "__init__.py"
    assert init.is_file(), f"core/{room}/ is not a package"
    body = ast.parse(init.read_text()).body
    assert ast.get_docstring(ast.Module(body=body, type_ignores=[])), f"core/{room}: no docstring"
    assert len(body) == 1, f"core/{room}/__init__.py holds more than its docstring"


def test_every_room_ships_in_the_wheel():
    """setuptools is given its packages by name: a room left out of the list
    would install a gemmreg that fails at its first import of that room."""
    tomllib = pytest.importorskip("tomllib")
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    shipped = {name for name in setuptools["packages"] if name.startswith("gemmreg.")}
    assert shipped == {f"gemmreg.{room}" for room in rooms.ROOMS}
    data = setuptools["package-data"]
    beside = {path.parent.name for path in CORE.rglob("*") if path.suffix == ".hip"}
    assert all("*.hip" in data.get(f"gemmreg.{room}", ()) for room in beside), beside


def describe(name: str, i: Import) -> str:
    return (
        f"core/{name.replace('.', '/')}.py:{i.line} ({rooms.ROOMS[rooms.room_of(name)]}) "
        f"imports {i.module} ({rooms.ROOMS[rooms.room_of(i.module)]})"
    )


def test_no_core_module_imports_from_a_room_above_its_own():
    graph = import_graph()
    upward = upward_imports(graph)
    allowed = rooms.UPWARD_IMPORTS
    offenders = [describe(name, i) for name, i in upward if (name, i.module) not in allowed]
    assert not offenders, "\n".join(offenders)
    stale = set(allowed) - {(name, i.module) for name, i in upward}
    assert not stale, f"exemptions no longer needed: {sorted(stale)}"


def test_exemptions_are_few_and_say_why():
    assert len(rooms.UPWARD_IMPORTS) <= 3
    assert all(len(reason.split()) >= 5 for reason in rooms.UPWARD_IMPORTS.values())


def test_no_import_cycles_among_core_modules():
    assert cycles(import_graph()) == []


def line_counts() -> Iterator[tuple[str, int]]:
    for name, path in core_modules().items():
        yield name, len(path.read_text().splitlines())


def test_no_core_module_is_over_the_line_limit():
    over = {name: count for name, count in line_counts() if count > MAX_LINES}
    assert not over, f"over {MAX_LINES} lines: {over}"


def test_the_records_a_plugin_author_reads_stay_short():
    assert dict(line_counts())["contract.records"] <= RECORDS_MAX_LINES


@pytest.mark.parametrize("room", rooms.ROOMS)
def test_every_room_is_described_in_the_map_s_docstring_and_its_own(room):
    assert f"**{room}**" in (rooms.__doc__ or "")
    own = ast.get_docstring(ast.parse((CORE / room / "__init__.py").read_text())) or ""
    assert len(own.split()) >= 10, f"core/{room}/__init__.py: say what the room holds and why"


def test_the_layout_page_names_the_rooms_in_their_order():
    page = " ".join((REPO / "docs" / "layout.md").read_text().split())
    assert ", ".join(rooms.ROOMS) in page
