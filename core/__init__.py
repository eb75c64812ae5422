"""gemmreg: a plugin registry for GEMM kernels.

Plugin authors need only what this module exports (``__all__``): the
``hookimpl`` marker, the records a plugin fills in, where its kernels run
(:func:`where`), the run-time compiler for HIP/CUDA sources, the input
helpers, and, for a plugin's own tuner, the order to time its candidates in
(:func:`williams_rows`, the design of gemmreg's own rounds) and the clock to
time them with (:func:`sample_ms`, the one gemmreg's verdicts use, and
:func:`clock_note`, how it queued its samples). Every other
module of the package is the core's own and may change; plugins import none
of them (a test in gemmreg's own suite holds the built-ins and the split-K
example to that). See :mod:`gemmreg.hookspecs` for the contract.

The same namespace holds the Python API for those who run gemmreg rather
than extend it: :func:`compare`, :func:`bench`, :func:`resume`, :func:`check`
and :func:`load_run`, the command line's work as calls that return typed results
(:mod:`gemmreg.api`; bad input raises :class:`UsageError`). They are imported
at first use (PEP 562), so that a plugin's ``import gemmreg`` stays light.

Importing gemmreg changes nothing in the process: Triton's interpreter is
switched on (where no GPU can be here) only where gemmreg runs kernels, in
its worker processes and in the scripts :func:`gemmreg.testing.run_fresh`
runs, and where it discovers plugins
(:func:`gemmreg.contract.backend.current`); another project's tests in an
environment where gemmreg is installed (its pytest plugin loads in every
session there) keep the Triton they asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy
from gemmreg.contract.bad_input import UsageError
from gemmreg.contract.balanced_orders import williams_rows
from gemmreg.contract.gpu_compile import CompiledKernel, compile_kernel
from gemmreg.contract.gpu_compile import unavailable_reason as compile_unavailable
from gemmreg.contract.grouped_problems import grouped_problem
from gemmreg.contract.inputs import apply_layout, normal_inputs, torch_dtype
from gemmreg.contract.judge_clock import clock_note, sample_ms
from gemmreg.contract.launch_variant import variant
from gemmreg.contract.records import (
    Capabilities,
    KernelSpec,
    Precision,
    Problem,
    SpecError,
    Tolerance,
    UnsupportedProblem,
)
from gemmreg.contract.runtime import Environment, where
from gemmreg.contract.tolerance_table import STANDARD_TOLERANCES, standard_tolerances
from gemmreg.contract.version import __version__
from gemmreg.contract.vocabulary import (
    ALL_DTYPES,
    BACKENDS,
    BATCH_LAYOUTS,
    DTYPES,
    LAYOUTS,
    LOW_PRECISION_DTYPES,
    OUT_DTYPES,
    SCALINGS,
    Backend,
    BatchLayout,
    DType,
    InputGenerator,
    Launch,
    Layout,
    MathMode,
    OutDType,
    Scaling,
)
from gemmreg.hookspecs import PROJECT_NAME

if TYPE_CHECKING:
    from gemmreg.api import (
        BenchResult,
        CheckResult,
        CompareResult,
        Run,
        bench,
        check,
        compare,
        load_run,
        resume,
    )


_API = frozenset(
    {
        "BenchResult",
        "CheckResult",
        "CompareResult",
        "Run",
        "bench",
        "check",
        "compare",
        "load_run",
        "resume",
    }
)
"""The names :mod:`gemmreg.api` lends this namespace, imported at first use."""


def __getattr__(name: str) -> Any:
    """The Python API's names, imported when first asked for (PEP 562): the
    API reads plugins and starts workers, and a plugin that imports gemmreg
    for its records should not pay for that."""
    if name in _API:
        from gemmreg import api

        return getattr(api, name)
    raise AttributeError(f"module 'gemmreg' has no attribute {name!r}")


hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marker for plugin hook implementations: ``@gemmreg.hookimpl``."""

__all__ = [
    "ALL_DTYPES",
    "BACKENDS",
    "BATCH_LAYOUTS",
    "DTYPES",
    "LAYOUTS",
    "LOW_PRECISION_DTYPES",
    "OUT_DTYPES",
    "SCALINGS",
    "STANDARD_TOLERANCES",
    "Backend",
    "BatchLayout",
    "BenchResult",
    "Capabilities",
    "CheckResult",
    "CompareResult",
    "CompiledKernel",
    "DType",
    "Environment",
    "InputGenerator",
    "KernelSpec",
    "Launch",
    "Layout",
    "MathMode",
    "OutDType",
    "Precision",
    "Problem",
    "Run",
    "Scaling",
    "SpecError",
    "Tolerance",
    "UnsupportedProblem",
    "UsageError",
    "__version__",
    "apply_layout",
    "bench",
    "check",
    "clock_note",
    "compare",
    "compile_kernel",
    "compile_unavailable",
    "grouped_problem",
    "hookimpl",
    "load_run",
    "normal_inputs",
    "resume",
    "sample_ms",
    "standard_tolerances",
    "torch_dtype",
    "variant",
    "where",
    "williams_rows",
]
