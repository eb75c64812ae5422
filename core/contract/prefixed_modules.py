"""The one loader of the registries whose entries are modules found by their
file names: check kinds (``gemmreg.checking.check_kind_*``), timing regimes
(``gemmreg.timing.regime_*``) and output formats
(``gemmreg.reporting.format_*``). Each module registers its entry as it is
imported, so a new entry is its module, with no line in the registry; the
registry imports them all, once, as it is itself imported.

In the contract, the room below all three of them, so that they share it
(``tests/test_rooms.py``).
"""

from __future__ import annotations

import importlib
import pkgutil


def import_prefixed(package: str, prefix: str) -> list[str]:
    """Import every module of ``package`` (dotted) whose name starts with
    ``prefix``, in name order, so that the entries register in the same order
    wherever they are loaded; the modules' full names, as imported. Called by
    a registry as it is imported, under the import lock: no thread sees it
    half filled."""
    found = importlib.import_module(package)
    names = sorted(m.name for m in pkgutil.iter_modules(found.__path__))
    chosen = [f"{package}.{name}" for name in names if name.startswith(prefix)]
    for module in chosen:
        importlib.import_module(module)
    return chosen
