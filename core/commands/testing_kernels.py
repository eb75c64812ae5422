"""Which kernel a name in ``gemmreg.testing.matrix()`` stands for, within one
pytest session: a ``KernelSpec`` given to ``matrix()`` (not yet packaged),
else an installed plugin. Both are found once per session and kept in the
pytest config's stash, so every generated case and the batch runner of
:mod:`gemmreg.testing` see the same kernels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from gemmreg.discovery.registry_records import RegisteredKernel, Registry
    from gemmreg.discovery.spec_reference import KnownSpecs, SpecReference

_REGISTRY = pytest.StashKey["Registry"]()
_SPECS = pytest.StashKey["KnownSpecs"]()


def registry(config: pytest.Config) -> Registry:
    """The installed plugins, discovered once per session."""
    if _REGISTRY not in config.stash:
        from gemmreg.discovery.registry import discover

        config.stash[_REGISTRY] = discover()
    return config.stash[_REGISTRY]


def specs(config: pytest.Config) -> KnownSpecs:
    """The kernels given to matrix() as specs in this session."""
    from gemmreg.discovery.spec_reference import KnownSpecs

    if _SPECS not in config.stash:
        config.stash[_SPECS] = KnownSpecs()
    return config.stash[_SPECS]


def kernel(config: pytest.Config, name: str) -> RegisteredKernel:
    """The RegisteredKernel ``name``: a spec given to matrix(), else an installed one."""
    return specs(config).get(name) or registry(config).get(name)


class MatrixKernels:
    """What one matrix() names: its specs, then the installed plugins."""

    def __init__(self, config: pytest.Config, given: Sequence[SpecReference]) -> None:
        self.config = config
        self.conflicts = {r.name: why for r in given if (why := specs(config).add(r))}

    def get(self, name: str) -> RegisteredKernel:
        if name in self.conflicts:
            raise LookupError(self.conflicts[name])
        return kernel(self.config, name)
