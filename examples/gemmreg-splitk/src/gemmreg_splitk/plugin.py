"""The gemmreg plugin: two kernels, deterministic split-K and atomic split-K.

Written against gemmreg's public API only (the names ``gemmreg`` exports),
and registered through the ``gemmreg`` entry-point group. Where the kernels
run (the device, its multiprocessors, whether Triton is interpreted) comes
from ``gemmreg.where()``; Triton's known limits (bf16 under the interpreter)
from ``Capabilities(triton=True)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import gemmreg

from gemmreg_splitk import heuristics, kernel

if TYPE_CHECKING:
    import torch

PRECISION = {
    "fp32": gemmreg.Precision(
        math="ieee_fp32", detail="tl.dot input_precision='ieee', fp32 partials"
    ),
    "fp16": gemmreg.Precision(math="fp16", detail="tl.dot, fp32 partials"),
    "bf16": gemmreg.Precision(math="bf16", detail="tl.dot, fp32 partials"),
}

SUM_ORDER = (
    "split-K changes the order of the sum (per-slice partials, then their sum), "
    "but every partial is fp32, so the fp32 accumulation bound holds"
)
TOLERANCES = {
    "fp32": gemmreg.Tolerance(rtol=3e-5, atol=1e-6, why=SUM_ORDER),
    "fp16": gemmreg.Tolerance(
        rtol=2e-3, atol=1e-3, why=SUM_ORDER + "; plus one fp16 rounding of C"
    ),
    "bf16": gemmreg.Tolerance(
        rtol=1e-2, atol=1e-2, why=SUM_ORDER + "; plus one bf16 rounding of C"
    ),
}


CAPABILITIES = gemmreg.Capabilities(
    dtypes={"fp32", "fp16", "bf16"},
    backends={"cuda", "rocm", "cpu"},
    precision=PRECISION,
    layouts={"rowmajor", "transposedA", "transposedB", "padded"},
    triton=True,
)


def _processors(where: gemmreg.Environment) -> int:
    """The multiprocessors the split should fill; a stand-in when interpreted."""
    if where.triton_interpreted or where.multiprocessors is None:
        return heuristics.CPU_PROCESSORS
    return where.multiprocessors


def make_prepare(atomic: bool):
    def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
        import torch
        import triton

        CAPABILITIES.require(problem)
        where = gemmreg.where()
        m, n, k = problem.m, problem.n, problem.k
        config = heuristics.choose(m, n, k, _processors(where))
        partial, reduce = kernel.kernels()
        slots = 1 if atomic else config.split_k
        # The workspace lives where the core puts the operands.
        workspace = torch.empty(slots * m * n, dtype=torch.float32, device=where.device)
        grid = (triton.cdiv(m, config.block_m) * triton.cdiv(n, config.block_n), config.split_k)
        reduce_grid = (triton.cdiv(m * n, kernel.REDUCE_BLOCK),)

        def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
            if atomic:
                workspace.zero_()
            partial[grid](
                a,
                b,
                workspace,
                m,
                n,
                k,
                config.k_per_split,
                a.stride(0),
                a.stride(1),
                b.stride(0),
                b.stride(1),
                BLOCK_M=config.block_m,
                BLOCK_N=config.block_n,
                BLOCK_K=config.block_k,
                ATOMIC=atomic,
                PRECISION=kernel.INPUT_PRECISION,
                num_warps=config.num_warps,
            )
            reduce[reduce_grid](
                workspace,
                out,
                m,
                n,
                slots,
                out.stride(0),
                out.stride(1),
                BLOCK=kernel.REDUCE_BLOCK,
            )

        return launch

    return prepare


def _spec(name: str, atomic: bool, summary: str) -> gemmreg.KernelSpec:
    return gemmreg.KernelSpec(
        name=name,
        summary=summary,
        prepare=make_prepare(atomic),
        capabilities=CAPABILITIES,
        tolerances=TOLERANCES,
        sources=(str(Path(kernel.__file__)),),
    )


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(_spec("splitk", False, "Triton split-K GEMM: fp32 partials, deterministic reduction"))
    register(_spec("splitk_atomic", True, "Triton split-K GEMM: fp32 atomic-add partials"))
