"""Meta-tests that keep the contract honest."""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import textwrap
from pathlib import Path

import attrs
import gemmreg
import pytest
import torch
from conftest import BUILT_INS, REPO
from gemmreg import hookspecs
from gemmreg.contract import known_limits
from gemmreg.discovery.registry import discover


def hook_names():
    return [
        name
        for name, _ in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("gemmreg_")
    ]


def test_every_hook_is_documented_in_its_spec_and_the_plugin_guide():
    guide = (REPO / "docs" / "plugins.md").read_text()
    assert hook_names()
    for name in hook_names():
        function = getattr(hookspecs, name)
        doc = inspect.getdoc(function) or ""
        assert ":param" in doc and ":returns:" in doc, name
        assert name in guide, f"{name} is not in docs/plugins.md"


def test_the_readme_is_a_front_door():
    """The pitch, the commands, the seed's table, a plugin, links: the
    protocols and the guides live in docs/."""
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    for page in ("checking", "timing", "results", "plugins", "layout"):
        assert f"docs/{page}.md" in readme and (REPO / "docs" / f"{page}.md").is_file()


def test_the_core_never_names_a_plugin():
    pattern = re.compile("|".join(["gemmreg_plugins", *BUILT_INS]))
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "core").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not offenders, offenders


def test_the_readme_figures_are_the_evidence_files_verbatim():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(REPO / "scripts" / "readme_evidence.py"), "--check"])
    assert done.returncode == 0, "a page is stale: run python scripts/readme_evidence.py"


# ---------------------------------------------------------------------------
# Plugins import only the public namespace
# ---------------------------------------------------------------------------


def plugin_modules() -> list[Path]:
    """Every plugin module in the repository: the built-ins and the examples."""
    found = sorted((REPO / "plugins").rglob("*.py"))
    for example in sorted((REPO / "examples").iterdir()):
        found += sorted((example / "src").rglob("*.py"))
    return found


def private_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """Imports of gemmreg's modules, and ``gemmreg.X`` where X is not in __all__."""
    public = set(gemmreg.__all__)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("gemmreg.")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("gemmreg."):
                found.append((node.lineno, f"from {node.module} import ..."))
            elif node.module == "gemmreg":
                found += [
                    (node.lineno, f"from gemmreg import {a.name}")
                    for a in node.names
                    if a.name not in public
                ]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "gemmreg"
            and node.attr not in public
        ):
            found.append((node.lineno, f"gemmreg.{node.attr}"))
    return found


def test_the_private_use_finder_finds_each_way_in():
    code = (
        "import gemmreg.contract.backend\nfrom gemmreg.contract.records import DType\nfrom gemmreg import inputs\n"
        "import gemmreg\ngemmreg.contract.runtime.where()\nfrom gemmreg import where\ngemmreg.Problem\n"
    )
    assert [line for line, _ in private_uses(ast.parse(code))] == [1, 2, 3, 5]


def test_plugins_import_only_the_public_gemmreg_namespace():
    modules = plugin_modules()
    assert any("gemmreg_splitk" in str(path) for path in modules)
    assert any("gemmreg_minimal" in str(path) for path in modules)
    assert any("triton_tuned" in str(path) for path in modules)
    offenders = [
        f"{path.relative_to(REPO)}:{line}: {what}"
        for path in modules
        for line, what in private_uses(ast.parse(path.read_text(), str(path)))
    ]
    assert not offenders, offenders


SNIFFED_VARIABLES = {
    "TRITON_INTERPRET",
    "GEMMREG_DEVICE",
    "GEMMREG_CACHE_DIR",
    "GEMMREG_SANITIZING",
}
"""What the core decides or sets for plugins; ``gemmreg.where()`` reports it."""
SNIFFED_QUERIES = {"is_available", "get_device_properties", "get_device_capability"}
"""torch's device queries, which can disagree with the core (GEMMREG_DEVICE=cpu)."""


def sniffs(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in SNIFFED_VARIABLES:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.Attribute) and node.attr in SNIFFED_QUERIES:
            found.append((node.lineno, node.attr))
    return found


def test_no_plugin_restates_a_limit_the_core_declares_or_sniffs_the_environment():
    code = 'os.environ.get("TRITON_INTERPRET")\ntorch.cuda.is_available()\n"TRITON_INTERPRET=1"\n'
    assert [line for line, _ in sniffs(ast.parse(code))] == [1, 2]
    for path in plugin_modules():
        text = path.read_text()
        assert known_limits.TRITON_INTERPRETER_BF16 not in text, path
        found = sniffs(ast.parse(text))
        assert not found, f"{path.relative_to(REPO)} finds out for itself: {found}"


# ---------------------------------------------------------------------------
# Every public name is documented
# ---------------------------------------------------------------------------


def attribute_docstrings(path: Path) -> dict[str, str]:
    """``NAME = value`` followed by a string literal, at module level."""
    body = ast.parse(path.read_text()).body
    docs = {}
    for node, after in itertools.pairwise(body):
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            for target in targets:
                if isinstance(target, ast.Name) and isinstance(after.value.value, str):
                    docs[target.id] = after.value.value
    return docs


def defining_file(name: str) -> Path:
    """The core module a name of ``gemmreg.__all__`` comes from."""
    package = REPO / "core"
    for node in ast.parse((package / "__init__.py").read_text()).body:
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("gemmreg.")
            and name in {alias.asname or alias.name for alias in node.names}
        ):
            return package / f"{node.module.split('.', 1)[1].replace('.', '/')}.py"
    return package / "__init__.py"


def public_docstring(name: str) -> str:
    """A class's or function's own docstring (never one inherited from a base
    class), else the string literal after the name's assignment in its module."""
    value = getattr(gemmreg, name)
    if inspect.isclass(value):
        return value.__dict__.get("__doc__") or ""
    if inspect.isroutine(inspect.unwrap(value)):
        return inspect.unwrap(value).__doc__ or ""
    return attribute_docstrings(defining_file(name)).get(name, "")


def test_every_public_name_has_a_docstring():
    assert public_docstring("Environment") and public_docstring("DTYPES")
    undocumented = [name for name in gemmreg.__all__ if not (public_docstring(name) or "").strip()]
    assert not undocumented, undocumented
    assert all(hasattr(gemmreg, name) for name in gemmreg.__all__)


def test_the_package_ships_its_type_marker():
    assert (REPO / "core" / "py.typed").is_file()
    assert '"py.typed"' in (REPO / "pyproject.toml").read_text()


# ---------------------------------------------------------------------------
# The hookspec module's example runs
# ---------------------------------------------------------------------------


def literal_blocks(text: str) -> list[str]:
    """The reStructuredText literal blocks (``::`` then an indented block) of a docstring."""
    blocks, lines = [], text.splitlines()
    for index, line in enumerate(lines):
        if not line.rstrip().endswith("::"):
            continue
        indent = len(line) - len(line.lstrip())
        block = []
        for following in lines[index + 1 :]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            block.append(following)
        blocks.append(textwrap.dedent("\n".join(block)).strip() + "\n")
    return blocks


@pytest.fixture
def hookspec_example(tmp_path, monkeypatch):
    """The hookspec module's plugin example, as a module file that can be imported
    (Triton reads a kernel's source from its file)."""
    (code,) = [b for b in literal_blocks(hookspecs.__doc__ or "") if "@gemmreg.hookimpl" in b]
    (tmp_path / "contract_example_plugin.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "contract_example_plugin"


MINIMAL = REPO / "examples" / "gemmreg-minimal"
"""The minimal example package, whose files the README and docs/plugins.md quote."""
MINIMAL_MODULE = MINIMAL / "src" / "gemmreg_minimal.py"
MINIMAL_LINES = 30
"""The README promises the minimal plugin in at most this many non-blank lines
of Python, docstring included."""
ENTRY_POINT_LINES = 3
"""...and its entry point in at most this many lines of TOML."""


@pytest.fixture
def minimal_example(monkeypatch):
    """The README's entry point for the minimal example, resolved from the
    example's source tree (installed or not), as gemmreg resolves entry points."""
    readme = (REPO / "README.md").read_text()
    (toml,) = re.findall(r"```toml\n(.*?)```", readme, re.S)
    assert toml in (MINIMAL / "pyproject.toml").read_text()
    assert toml.startswith("[project.entry-points.gemmreg]\n")
    assert len(toml.splitlines()) <= ENTRY_POINT_LINES
    (value,) = re.findall(r'^minimal_triton = "(.+)"$', toml, re.M)
    monkeypatch.syspath_prepend(str(MINIMAL / "src"))
    return value


def registered(module: str):
    registry = discover(extra_plugins=[module], env={"GEMMREG_PLUGINS": "none"})
    assert not registry.issues, registry.issues
    (kernel,) = registry.kernels.values()
    return kernel.spec


@pytest.mark.filterwarnings("ignore:Conversion of an array with ndim:DeprecationWarning")
@pytest.mark.parametrize("example", ["hookspec_example", "minimal_example"])
def test_the_documented_examples_register_and_compute_a_gemm(example, request):
    spec = registered(request.getfixturevalue(example))
    assert spec.capabilities.precision["fp32"].math == "ieee_fp32"  # interpreted here
    assert spec.capabilities.triton
    for dtype, layout, (m, n, k) in [
        ("fp32", "transposedB", (17, 19, 23)),
        ("fp16", "padded", (33, 5, 40)),
    ]:
        problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype, layout=layout)
        a, b = gemmreg.normal_inputs(problem, 3, torch.device("cpu"))
        a, b = gemmreg.apply_layout(a, b, layout)
        out = torch.full((m, n), float("nan"), dtype=a.dtype)
        spec.prepare(problem)(a, b, out)
        tolerance = spec.tolerances[dtype]
        bound = tolerance.atol + tolerance.rtol * (a.double().abs() @ b.double().abs())
        assert bool(((out.double() - a.double() @ b.double()).abs() <= bound).all()), problem
    with pytest.raises(gemmreg.UnsupportedProblem):
        spec.prepare(gemmreg.Problem(m=4, n=4, k=4, dtype="bf16"))


def test_the_hookspec_example_declares_tf32_where_triton_runs_on_nvidia(
    hookspec_example, monkeypatch
):
    here = gemmreg.where()
    nvidia = attrs.evolve(here, backend="cuda", device="cuda", triton_interpreted=False)
    monkeypatch.setattr(gemmreg, "where", lambda: nvidia)
    spec = registered(hookspec_example)
    assert spec.capabilities.precision["fp32"].math == "tf32"
    assert "TF32" in spec.tolerances["fp32"].why
    assert spec.tolerances["fp32"].rtol > spec.tolerances["fp16"].rtol


def test_the_pages_show_the_minimal_example_as_it_is_tested():
    """README and the plugin guide quote the package's own files between
    evidence markers (kept verbatim by scripts/readme_evidence.py, checked
    above), so what a reader copies is what its matrix and the test above run."""
    readme = (REPO / "README.md").read_text()
    guide = (REPO / "docs" / "plugins.md").read_text()
    marker = "<!-- evidence: examples/gemmreg-minimal/{} -->"
    assert marker.format("tests/test_matrix.py") in readme
    for name in ("pyproject.toml", "src/gemmreg_minimal.py", "tests/test_matrix.py"):
        assert marker.format(name) in guide, name
    source = MINIMAL_MODULE.read_text()
    assert len([line for line in source.splitlines() if line.strip()]) <= MINIMAL_LINES
    assert f"{MINIMAL_LINES} lines of Python" in " ".join(readme.split())
    assert f"{MINIMAL_LINES} lines" in " ".join(guide.split())
    nodes = list(ast.walk(ast.parse(source)))
    imported = {a.name for node in nodes if isinstance(node, ast.Import) for a in node.names}
    assert not [node for node in nodes if isinstance(node, ast.ImportFrom)]
    assert imported == {"gemmreg", "triton", "triton.language"}  # gemmreg, and the kernel's own
