"""The seed chapter's Triton GEMM (sections 11.3.3-11.3.5), shared by
``triton_baseline`` (GROUP_M=1) and ``triton_grouped`` (GROUP_M=8).

One kernel source serves both plugins; they differ only in GROUP_SIZE_M, the
mapping from program id to output tile. Against the seed text, two things are
deliberately different, both for correctness on every edge:

- offsets are int64 before they are multiplied by strides (a 65536 x 65536
  offset wraps in int32);
- strides are arguments instead of the hard-coded ``k`` and ``n``, so
  transposed and padded operands are addressed correctly.

The precision given to ``tl.dot`` is explicit: ``ieee``. On NVIDIA, Triton's
default for fp32 is TF32; the seed's AMD card ran true fp32, and torch_ref
runs IEEE fp32, so pinning ``ieee`` keeps the seed table's rows comparable.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import gemmreg

if TYPE_CHECKING:
    import torch

BLOCK_M = 32
BLOCK_N = 32
BLOCK_K = 32
NUM_WARPS = 4
INPUT_PRECISION = "ieee"

PRECISION: dict[gemmreg.DType, gemmreg.Precision] = {
    "fp32": gemmreg.Precision(
        math="ieee_fp32", detail=f"tl.dot input_precision='{INPUT_PRECISION}'"
    ),
    "fp16": gemmreg.Precision(math="fp16", detail="tl.dot, fp32 accumulator"),
    "bf16": gemmreg.Precision(math="bf16", detail="tl.dot, fp32 accumulator"),
}

TOLERANCES: dict[gemmreg.DType, gemmreg.Tolerance] = {
    # IEEE fp32: rounding grows about like u*sqrt(K) of |A|@|B| (u = 2^-24), about
    # 1.5e-5 at K = 65536 with all-positive inputs; TF32 would sit near 2^-11.
    "fp32": gemmreg.Tolerance(rtol=3e-5, atol=1e-6),
    # Inputs are exact in the dtype; fp32 accumulation and one rounding of C to
    # the output dtype dominate: half an ulp is 2^-11 (fp16) and 2^-8 (bf16).
    "fp16": gemmreg.Tolerance(rtol=2e-3, atol=1e-3),
    "bf16": gemmreg.Tolerance(rtol=1e-2, atol=1e-2),
}


@functools.cache
def _kernel():
    """Build the @triton.jit kernel on first use: importing a plugin stays cheap,
    and TRITON_INTERPRET is already decided by the time triton is imported."""
    import triton
    import triton.language as tl

    @triton.jit
    def matmul_kernel(
        a_ptr,
        b_ptr,
        c_ptr,
        m,
        n,
        k,
        stride_am,
        stride_ak,
        stride_bk,
        stride_bn,
        stride_cm,
        stride_cn,
        BLOCK_SIZE_M: tl.constexpr,
        BLOCK_SIZE_N: tl.constexpr,
        BLOCK_SIZE_K: tl.constexpr,
        GROUP_SIZE_M: tl.constexpr,
        INPUT_PRECISION: tl.constexpr,
    ):
        # Program id -> output tile. GROUP_SIZE_M=1 walks tiles row by row;
        # larger groups walk GROUP_SIZE_M tile rows down one column of B first.
        program_id = tl.program_id(axis=0)
        programs_m = tl.cdiv(m, BLOCK_SIZE_M)
        programs_n = tl.cdiv(n, BLOCK_SIZE_N)
        programs_per_group = GROUP_SIZE_M * programs_n
        group_id = program_id // programs_per_group
        first_program_m = group_id * GROUP_SIZE_M
        group_m = tl.minimum(programs_m - first_program_m, GROUP_SIZE_M)
        program_in_group = program_id % programs_per_group
        program_m = first_program_m + program_in_group % group_m
        program_n = program_in_group // group_m

        offsets_m = (program_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)).to(tl.int64)
        offsets_n = (program_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)).to(tl.int64)
        offsets_k = tl.arange(0, BLOCK_SIZE_K).to(tl.int64)
        a_pointers = a_ptr + offsets_m[:, None] * stride_am + offsets_k[None, :] * stride_ak
        b_pointers = b_ptr + offsets_k[:, None] * stride_bk + offsets_n[None, :] * stride_bn
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)

        # Every load is masked on all of its axes, K included: K never wraps.
        for k_block in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
            current_k = k_block * BLOCK_SIZE_K + offsets_k
            a = tl.load(
                a_pointers, mask=(offsets_m[:, None] < m) & (current_k[None, :] < k), other=0.0
            )
            b = tl.load(
                b_pointers, mask=(current_k[:, None] < k) & (offsets_n[None, :] < n), other=0.0
            )
            accumulator += tl.dot(a, b, input_precision=INPUT_PRECISION)
            a_pointers += BLOCK_SIZE_K * stride_ak
            b_pointers += BLOCK_SIZE_K * stride_bk

        c_pointers = c_ptr + offsets_m[:, None] * stride_cm + offsets_n[None, :] * stride_cn
        output_mask = (offsets_m[:, None] < m) & (offsets_n[None, :] < n)
        tl.store(c_pointers, accumulator.to(c_ptr.dtype.element_ty), mask=output_mask)

    return matmul_kernel


def make_prepare(group_m: int):
    """The launch factory for one GROUP_SIZE_M: checks, grid, then the closure."""

    def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
        import triton

        CAPABILITIES.require(problem)

        kernel = _kernel()
        grid = (triton.cdiv(problem.m, BLOCK_M) * triton.cdiv(problem.n, BLOCK_N),)
        m, n, k = problem.m, problem.n, problem.k

        def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
            kernel[grid](
                a,
                b,
                out,
                m,
                n,
                k,
                a.stride(0),
                a.stride(1),
                b.stride(0),
                b.stride(1),
                out.stride(0),
                out.stride(1),
                BLOCK_SIZE_M=BLOCK_M,
                BLOCK_SIZE_N=BLOCK_N,
                BLOCK_SIZE_K=BLOCK_K,
                GROUP_SIZE_M=group_m,
                INPUT_PRECISION=INPUT_PRECISION,
                num_warps=NUM_WARPS,
            )

        return launch

    return prepare


BACKENDS: set[gemmreg.Backend] = {"cuda", "rocm", "cpu"}
CAPABILITIES = gemmreg.Capabilities(
    dtypes={"fp32", "fp16", "bf16"},
    backends=BACKENDS,
    precision=PRECISION,
    layouts={"rowmajor", "transposedA", "transposedB", "padded"},
    tile=(BLOCK_M, BLOCK_N, BLOCK_K),
    triton=True,  # the core applies Triton's known limits (bf16 under the interpreter)
)


def spec(name: str, group_m: int) -> gemmreg.KernelSpec:
    return gemmreg.KernelSpec(
        name=name,
        summary=f"seed Triton GEMM, 32x32x32 tiles, {NUM_WARPS} warps, GROUP_M={group_m}",
        prepare=make_prepare(group_m),
        capabilities=CAPABILITIES,
        tolerances=TOLERANCES,
        sources=(__file__,),
    )
