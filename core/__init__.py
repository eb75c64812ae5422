"""gemmreg: a plugin registry for GEMM kernels.

Plugin authors need only what this module exports: the ``hookimpl`` marker and
the records a plugin fills in. See :mod:`gemmreg.hookspecs` for the contract.
"""

from __future__ import annotations

import pluggy
from gemmreg.hookspecs import PROJECT_NAME
from gemmreg.records import (
    DTYPES,
    LAYOUTS,
    Capabilities,
    DType,
    KernelSpec,
    Launch,
    Layout,
    MathMode,
    Precision,
    Problem,
    SpecError,
    Tolerance,
    UnsupportedProblem,
)

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marker for plugin hook implementations: ``@gemmreg.hookimpl``."""

__all__ = [
    "DTYPES",
    "LAYOUTS",
    "Capabilities",
    "DType",
    "KernelSpec",
    "Launch",
    "Layout",
    "MathMode",
    "Precision",
    "Problem",
    "SpecError",
    "Tolerance",
    "UnsupportedProblem",
    "__version__",
    "hookimpl",
]
