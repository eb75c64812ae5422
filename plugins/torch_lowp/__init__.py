"""The low-precision references: the vendor library through torch.

torch_ref_fp8: ``torch._scaled_mm`` (cuBLASLt on CUDA, torch's own on the
CPU), fp8 e4m3 and e5m2 inputs scaled per tensor or per row of A and column
of B, written as bf16, fp16 or fp32, with fast accumulation off (the partial
sums promoted to fp32, gemmreg's ``fp8`` math).

torch_ref_int8: ``torch._int_mm``, int8 inputs summed exactly in int32.

Each declares every problem it can take and refuses, with cuBLASLt's own
rule as the reason, those it cannot: an H200 run of
``scripts/probes/lowp_rules.py`` and of ``gemmreg check`` over them
(evidence/2026-12-04-h200-lowp-rules) is where each rule below was read.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import gemmreg

if TYPE_CHECKING:
    import torch

FP8_LEAST_CAPABILITY = (8, 9)
"""fp8 tensor cores came with NVIDIA Ada (sm89) and Hopper (sm90)."""
FP8_ALIGNMENT = 16
"""cuBLASLt's fp8 GEMM takes K and N that are multiples of 16 (M is free)."""
INT_MM_ALIGNMENT = 8
"""``torch._int_mm`` on CUDA takes K and N that are multiples of 8..."""
INT_MM_LEAST_M = 17
"""... and M above 16."""

FP8_PRECISION = {
    dtype: gemmreg.Precision(
        math="fp8", detail="torch._scaled_mm (cuBLASLt on CUDA), use_fast_accum=False"
    )
    for dtype in ("fp8e4m3", "fp8e5m2")
}
INT8_PRECISION = {"int8": gemmreg.Precision(math="int8", detail="torch._int_mm, int32 sum")}


def _on_cuda() -> bool:
    return gemmreg.where().backend == "cuda"


def _fp8_constraint(problem: gemmreg.Problem) -> str | None:
    """cuBLASLt's rules for torch._scaled_mm; on the CPU, whose
    torch._scaled_mm takes every layout and shape, only the scaling (torch
    2.8's CPU kernel takes per-tensor scales alone)."""
    if not _on_cuda():
        return _cpu_refusal("scaled_mm_rowwise") if problem.scaling == "rowwise" else None
    if problem.dtype == "fp8e5m2":
        return "cuBLASLt multiplies no two e5m2 matrices (torch._scaled_mm refuses them)"
    if problem.layout != "transposedB":
        return "cuBLASLt's fp8 GEMM takes A row-major and B column-major only (layout transposedB)"
    if problem.k % FP8_ALIGNMENT or problem.n % FP8_ALIGNMENT:
        return f"torch._scaled_mm on CUDA needs K and N multiples of {FP8_ALIGNMENT}"
    return None


def _int8_constraint(problem: gemmreg.Problem) -> str | None:
    """torch._int_mm's rules on CUDA. cuBLASLt ran A row-major with B
    column-major at every shape the H200 matrix tried; row-major B failed at
    65x64x64 and 48x80x32, column-major A at 65x64x64, and padded rows at all
    four (CUBLAS_STATUS_NOT_SUPPORTED), so only that layout is declared."""
    if not _on_cuda():
        return None
    if problem.layout != "transposedB":
        return (
            "cuBLASLt's int8 GEMM (torch._int_mm) is declared for A row-major and B "
            "column-major only (layout transposedB): others failed on an H200 at some shapes"
        )
    if problem.m < INT_MM_LEAST_M:
        return f"torch._int_mm on CUDA needs M above {INT_MM_LEAST_M - 1}"
    if problem.k % INT_MM_ALIGNMENT or problem.n % INT_MM_ALIGNMENT:
        return f"torch._int_mm on CUDA needs K and N multiples of {INT_MM_ALIGNMENT}"
    return None


FP8_CAPABILITIES = gemmreg.Capabilities(
    precision=FP8_PRECISION,
    out_dtypes={"bf16", "fp16", "fp32"},
    scalings={"tensor", "rowwise"},
    backends={"cuda", "cpu"},
    layouts=gemmreg.LAYOUTS,
    constraint=_fp8_constraint,
)
INT8_CAPABILITIES = gemmreg.Capabilities(
    precision=INT8_PRECISION,
    backends={"cuda", "cpu"},
    layouts=gemmreg.LAYOUTS,
    constraint=_int8_constraint,
)


@functools.cache
def _cpu_refusal(probe: str) -> str | None:
    """Why this torch cannot run ``probe`` (``scaled_mm`` or ``int_mm``) on the
    CPU, or None: asked by running it once on 16x16 operands. ``scaled_mm_rowwise``:
    with a scale per row of A and per column of B."""
    import torch

    try:
        if probe.startswith("scaled_mm"):
            x = torch.ones(16, 16).to(torch.float8_e4m3fn)
            rows = probe.endswith("rowwise")
            scale_a, scale_b = (
                (torch.ones(16, 1), torch.ones(1, 16)) if rows else (torch.ones(1, 1),) * 2
            )
            torch._scaled_mm(x, x.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
        else:
            y = torch.ones(32, 32, dtype=torch.int8)
            torch._int_mm(y, y)
    except Exception as error:  # this torch's CPU build has no such kernel
        name = probe.replace("_rowwise", "")
        what = " with rowwise scales" if probe.endswith("rowwise") else ""
        return f"torch {torch.__version__} has no CPU torch._{name}{what} ({type(error).__name__})"
    return None


def fp8_unavailable() -> str | None:
    """Why fp8 cannot run here: a GPU before Ada, or a torch without a CPU _scaled_mm."""
    where = gemmreg.where()
    if where.backend == "cuda":
        if where.capability is not None and where.capability < FP8_LEAST_CAPABILITY:
            major, minor = where.capability
            return (
                f"fp8 needs NVIDIA Ada (sm89), Hopper (sm90) or later; this GPU is sm{major}{minor}"
            )
        return None
    if where.backend == "cpu":
        return _cpu_refusal("scaled_mm")
    return None  # the declared backends say why not elsewhere


def int8_unavailable() -> str | None:
    """Why int8 cannot run here: a torch without a CPU _int_mm."""
    return _cpu_refusal("int_mm") if gemmreg.where().backend == "cpu" else None


def prepare_fp8(problem: gemmreg.Problem) -> gemmreg.Launch:
    import torch

    FP8_CAPABILITIES.require(problem)
    out_dtype = gemmreg.torch_dtype(problem.out_dtype)

    def launch(
        a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, sa: torch.Tensor, sb: torch.Tensor
    ) -> None:
        torch._scaled_mm(
            a, b, scale_a=sa, scale_b=sb, out_dtype=out_dtype, use_fast_accum=False, out=out
        )

    return launch


def prepare_int8(problem: gemmreg.Problem) -> gemmreg.Launch:
    import torch

    INT8_CAPABILITIES.require(problem)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        torch._int_mm(a, b, out=out)

    return launch


TORCH_REF_FP8 = gemmreg.KernelSpec(
    name="torch_ref_fp8",
    summary="torch._scaled_mm: fp8 through cuBLASLt (or torch's CPU kernel), scaled",
    prepare=prepare_fp8,
    capabilities=FP8_CAPABILITIES,
    tolerances=gemmreg.standard_tolerances(FP8_PRECISION),
    available=fp8_unavailable,
    vendor_library=True,
)
TORCH_REF_INT8 = gemmreg.KernelSpec(
    name="torch_ref_int8",
    summary="torch._int_mm: int8 through cuBLASLt (or torch's CPU kernel), int32 sum",
    prepare=prepare_int8,
    capabilities=INT8_CAPABILITIES,
    tolerances=gemmreg.standard_tolerances(INT8_PRECISION),
    available=int8_unavailable,
    vendor_library=True,
)
