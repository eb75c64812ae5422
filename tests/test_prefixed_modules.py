"""The loader the check-kind, regime and format registries share
(:mod:`gemmreg.contract.prefixed_modules`): every module of the package whose
name has the prefix is imported, in name order, and no other."""

from __future__ import annotations

import sys

import pytest
from gemmreg.checking import check_kinds
from gemmreg.contract.prefixed_modules import import_prefixed
from gemmreg.reporting import formats
from gemmreg.timing import regimes

PACKAGE = "prefixed_modules_probe"


@pytest.fixture
def probe_package(tmp_path, monkeypatch):
    """A package whose ``entry_*`` modules note their import in ``ORDER``,
    written in the reverse of name order; any other module refuses to load."""
    root = tmp_path / PACKAGE
    root.mkdir()
    (root / "__init__.py").write_text("ORDER = []\n")
    noted = f"from {PACKAGE} import ORDER\nORDER.append(__name__)\n"
    (root / "entry_c.py").write_text(noted)
    (root / "entry_b").mkdir()  # a subpackage with the prefix is an entry too
    (root / "entry_b" / "__init__.py").write_text(noted)
    (root / "entry_a.py").write_text(noted)
    (root / "other.py").write_text("raise AssertionError('not an entry')\n")
    (root / "xentry_d.py").write_text("raise AssertionError('the prefix starts the name')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]


def test_every_module_with_the_prefix_is_imported_in_name_order(probe_package):
    entries = [f"{PACKAGE}.entry_a", f"{PACKAGE}.entry_b", f"{PACKAGE}.entry_c"]
    assert import_prefixed(PACKAGE, "entry_") == entries
    noted = sys.modules[PACKAGE].ORDER
    assert noted == entries
    assert f"{PACKAGE}.other" not in sys.modules


def test_each_registry_holds_an_entry_from_every_module_of_its_prefix():
    """Every module the loader finds defines an entry its registry holds."""
    registries = [
        (
            "gemmreg.reporting",
            formats.FORMAT_MODULE_PREFIX,
            {type(formats.get(name)).__module__ for name in formats.names()},
        ),
        (
            "gemmreg.checking",
            check_kinds.CHECK_KIND_MODULE_PREFIX,
            {type(check_kinds.get(name)).__module__ for name in check_kinds.names()},
        ),
        (
            "gemmreg.timing",
            regimes.REGIME_MODULE_PREFIX,
            {type(regime).__module__ for regime in regimes.registered()},
        ),
    ]
    for package, prefix, defined_in in registries:
        modules = import_prefixed(package, prefix)
        assert len(modules) >= 2 and set(modules) <= defined_in, package
