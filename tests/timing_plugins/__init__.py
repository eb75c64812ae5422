"""Throwaway plugins for timing and integrity tests: an A/A pair, a known small
slowdown, a kernel whose work escapes the caller's stream, one that works
only where a profiler records, an honest split-K kernel of several launches,
and three that skip work while timed (on unchanged operands, from a cache
kept by the operands' identity, when the round loop is on their stack). Each
module is
one plugin, loaded with ``GEMMREG_EXTRA_PLUGINS=timing_plugins.<module>`` and
``tests/`` on PYTHONPATH (so worker processes can import it too).

They declare what ``torch.mm`` really does, like the built-in torch_ref, and
import only the public ``gemmreg`` namespace.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Set
from typing import Any

import gemmreg

PRECISION = {
    "fp32": gemmreg.Precision(math="ieee_fp32", detail="torch.mm, TF32 off"),
    "fp16": gemmreg.Precision(math="fp16", detail="torch.mm, reduced-precision reduction off"),
    "bf16": gemmreg.Precision(math="bf16", detail="torch.mm, reduced-precision reduction off"),
}

TOLERANCES = {
    "fp32": gemmreg.Tolerance(
        rtol=3e-5, atol=1e-6, why="IEEE fp32: rounding grows about like u*sqrt(K) of |A|@|B|"
    ),
    "fp16": gemmreg.Tolerance(rtol=2e-3, atol=1e-3),
    "bf16": gemmreg.Tolerance(rtol=1e-2, atol=1e-2),
}


def runs_on_cpu() -> bool:
    """True where gemmreg runs kernels on the CPU: no GPU, or GEMMREG_DEVICE=cpu
    (gemmreg's documented switch, which the tests set on GPU hosts too)."""
    import torch

    return os.environ.get("GEMMREG_DEVICE", "").lower() == "cpu" or not torch.cuda.is_available()


def _cpu_bf16_padded(problem: gemmreg.Problem) -> str | None:
    """torch's CPU bf16 GEMM reads past the end of A's rows when A is padded
    (see torch_ref); these kernels are torch.mm too, so they declare it out."""
    if problem.dtype == "bf16" and problem.layout == "padded" and runs_on_cpu():
        return "torch's CPU bf16 GEMM reads past the end of A's rows (padding reaches C)"
    return None


def capabilities(backends: Set[str]) -> gemmreg.Capabilities:
    return gemmreg.Capabilities(
        dtypes={"fp32", "fp16", "bf16"},
        backends=set(backends),
        precision=PRECISION,
        layouts={"rowmajor", "transposedA", "transposedB", "padded"},
        constraint=_cpu_bf16_padded,
    )


def torch_mm_spec(
    name: str,
    summary: str,
    make_launch: Callable[[gemmreg.Problem], gemmreg.Launch],
    backends: Set[str] = frozenset({"cuda", "rocm", "cpu"}),
    **overrides: Any,
) -> gemmreg.KernelSpec:
    """A torch.mm-like kernel spec; ``make_launch`` is called once per problem,
    after the problem is checked against the declared capabilities."""
    caps = capabilities(backends)

    def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
        caps.require(problem)
        return make_launch(problem)

    return gemmreg.KernelSpec(
        name=name,
        summary=summary,
        prepare=prepare,
        capabilities=caps,
        tolerances=TOLERANCES,
        **overrides,
    )
