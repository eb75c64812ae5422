"""Finding a :class:`KernelSpec` object again in a worker process.

``gemmreg.testing.matrix(SPEC)`` lets an author test a kernel before it is
packaged, with no entry point. Its cases still run in gemmreg's worker
processes (a crash must fail its case, not the session), and a worker finds
kernels by discovering plugins. So the spec is named the way an entry point
names an object, ``module:NAME``, and the workers load that one module as
their only plugin (:data:`gemmreg.discovery.registry.EXTRA_ENV`), with the directory it
was imported from on their ``PYTHONPATH``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
from gemmreg.contract.records import KernelSpec, SpecError
from gemmreg.discovery.registry import (
    EXTRA_ENV,
    NO_ENTRY_POINTS,
    ONLY_ENV,
    RegisteredKernel,
    Registry,
    discover,
)


@attrs.frozen(kw_only=True)
class SpecReference:
    """Where a worker can import a spec from."""

    name: str
    """The kernel's name."""
    path: str
    """``module:NAME``, as an entry point writes it."""
    root: str
    """The directory ``module`` was imported from: goes on the workers' PYTHONPATH."""


def _import_root(module: ModuleType) -> str | None:
    """The sys.path entry ``module`` was found under, from its file and dotted name."""
    file = getattr(module, "__file__", None)
    if not file:
        return None
    base = Path(file).resolve().parent
    if Path(file).name == "__init__.py":
        base = base.parent
    for _ in range(module.__name__.count(".")):
        base = base.parent
    return str(base)


def _holders(spec: KernelSpec, module: ModuleType) -> list[str]:
    return [name for name, value in list(vars(module).items()) if value is spec]


def reference_to(spec: KernelSpec, caller: Mapping[str, Any]) -> SpecReference:
    """How a worker can import ``spec``: from a module that holds it as a
    module-level name, preferring any other module to the caller's own (the
    test module, whose import re-runs its test declarations).

    :param caller: The globals of the module that called ``matrix()``.
    :raises SpecError: When no importable module holds it at module level.
    """
    if not isinstance(spec, KernelSpec):
        raise SpecError(f"matrix() takes kernel names or KernelSpecs, got {type(spec).__name__}")
    caller_name = caller.get("__name__", "")
    modules = sorted(
        (name, module)
        for name, module in list(sys.modules.items())
        if isinstance(module, ModuleType) and name not in ("__main__", caller_name)
    )
    caller_module = sys.modules.get(caller_name)
    if caller_module is not None:
        modules.append((caller_name, caller_module))
    for module_name, module in modules:
        names = _holders(spec, module)
        root = _import_root(module) if names else None
        if root is not None:
            return SpecReference(
                name=spec.name, path=f"{module_name}:{sorted(names)[0]}", root=root
            )
    raise SpecError(
        f"matrix(): KernelSpec {spec.name!r} must be a module-level name of an importable "
        "module (SPEC = gemmreg.KernelSpec(...)), so that gemmreg's worker processes can "
        "import it"
    )


def worker_environment(reference: SpecReference) -> dict[str, str]:
    """The variables that make a worker load this spec as its only plugin."""
    path = os.pathsep.join(filter(None, [reference.root, os.environ.get("PYTHONPATH", "")]))
    return {EXTRA_ENV: reference.path, ONLY_ENV: NO_ENTRY_POINTS, "PYTHONPATH": path}


class KnownSpecs:
    """The specs given to ``matrix()`` in one pytest session, by kernel name,
    each loaded on its own (no entry point), as its workers will load it."""

    def __init__(self) -> None:
        self._by_name: dict[str, tuple[SpecReference, Registry]] = {}

    def add(self, reference: SpecReference) -> str | None:
        """Load ``reference`` here; the reason it cannot be used, or None."""
        known = self._by_name.get(reference.name)
        if known is not None:
            if known[0] == reference:
                return None
            return (
                f"two different KernelSpecs named {reference.name!r} in one session: "
                f"{known[0].path} and {reference.path}"
            )
        found = discover(extra_plugins=[reference.path], env={ONLY_ENV: NO_ENTRY_POINTS})
        self._by_name[reference.name] = (reference, found)
        return None

    def get(self, name: str) -> RegisteredKernel | None:
        """The kernel ``name`` if it was given as a spec, else None.

        :raises LookupError: When the spec's module did not load as a plugin.
        """
        known = self._by_name.get(name)
        return None if known is None else known[1].get(name)

    def worker_environment(self, name: str) -> dict[str, str]:
        """What a worker needs to find ``name``: nothing for an installed kernel."""
        known = self._by_name.get(name)
        return {} if known is None else worker_environment(known[0])


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """Set ``values`` in this process's environment (which workers inherit) and
    put back what was there."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
