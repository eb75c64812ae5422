"""torch_ref: ``torch.mm`` on whatever device is present (cuBLAS, hipBLAS or
the CPU BLAS), and ``torch.bmm`` for a batched problem, packed or strided
(the batched GEMM of cuBLAS takes any batch stride), and for a grouped
problem (an MoE layer's experts) one ``torch.mm`` per member. The reference
point every other kernel is compared against.

torch_ref_tf32: the same ``torch.mm``, fp32 only, declared TF32: cuBLAS TF32,
the like-for-like reference of a kernel whose fp32 runs as TF32 (Triton's
``tl.dot`` on NVIDIA), which against torch_ref would be UNLIKE PRECISION.

Both rely on the core pinning torch's matmul flags per kernel, from the math
it declares: TF32 on for a kernel that declares ``tf32`` for fp32, off (IEEE
fp32) otherwise, reduced-precision reductions always off. A plugin never sets
torch's global flags itself; the two kernels differ only in what they declare.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gemmreg

if TYPE_CHECKING:
    import torch

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


def _cpu_bf16_padded(problem: gemmreg.Problem) -> str | None:
    """torch's CPU bf16 GEMM (seen in torch 2.13) reads the padding past the end
    of A's rows when A's row stride exceeds K: NaN there reaches C. gemmreg's
    padded-layout case found it; until torch fixes it, the case is declared out."""
    if problem.dtype == "bf16" and problem.layout == "padded" and not gemmreg.where().is_gpu:
        return "torch's CPU bf16 GEMM reads past the end of A's rows (padding reaches C)"
    return None


CAPABILITIES = gemmreg.Capabilities(
    dtypes={"fp32", "fp16", "bf16"},
    backends={"cuda", "rocm", "cpu"},
    precision=PRECISION,
    layouts={"rowmajor", "transposedA", "transposedB", "padded"},
    batch_layouts={"packed", "strided"},
    grouped=True,
    constraint=_cpu_bf16_padded,
)


def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
    import torch

    CAPABILITIES.require(problem)

    def launch_batched(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        torch.bmm(a, b, out=out)

    if problem.batch > 1:
        return launch_batched
    if problem.groups:
        return _grouped_launch(problem.groups)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        torch.mm(a, b, out=out)

    return launch


def _grouped_launch(groups: tuple[int, ...]) -> gemmreg.Launch:
    """One ``torch.mm`` per non-empty member, its rows of A and C times its B.
    The rows come from the problem's sizes, fixed here: reading the offsets
    tensor on the host would synchronise inside the timed call (they say the
    same rows: the core makes them from the same sizes)."""
    import torch

    members, start = [], 0
    for index, size in enumerate(groups):
        if size:
            members.append((index, start, start + size))
        start += size

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, offsets: object) -> None:
        for index, first, stop in members:
            torch.mm(a[first:stop], b[index], out=out[first:stop])

    return launch


TF32_PRECISION = {"fp32": gemmreg.Precision(math="tf32", detail="torch.mm, TF32 on")}

TF32_CAPABILITIES = gemmreg.Capabilities(
    dtypes={"fp32"},
    backends={"cuda"},
    precision=TF32_PRECISION,
    layouts={"rowmajor", "transposedA", "transposedB", "padded"},
)

TF32_LEAST_CAPABILITY = (8, 0)
"""TF32 tensor cores came with NVIDIA Ampere (sm80): before it cuBLAS has no
TF32 math, and torch.mm with TF32 allowed would quietly be IEEE fp32."""


def tf32_unavailable() -> str | None:
    """Why torch.mm cannot run as TF32 here, or None: only NVIDIA Ampere and later."""
    where = gemmreg.where()
    if where.backend != "cuda":
        return (
            "TF32 is a tensor-core mode of NVIDIA GPUs (Ampere, sm80, and later); "
            f"this machine's backend is {where.backend}"
        )
    if where.capability is not None and where.capability < TF32_LEAST_CAPABILITY:
        major, minor = where.capability
        return f"TF32 needs NVIDIA Ampere (sm80) or later; this GPU is sm{major}{minor}"
    return None


def prepare_tf32(problem: gemmreg.Problem) -> gemmreg.Launch:
    """torch.mm as torch_ref's: the core allows TF32 around this kernel's calls."""
    import torch

    TF32_CAPABILITIES.require(problem)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        torch.mm(a, b, out=out)

    return launch


TORCH_REF_TF32 = gemmreg.KernelSpec(
    name="torch_ref_tf32",
    summary="torch.mm with TF32 (cuBLAS TF32): the like-for-like reference of TF32 kernels",
    prepare=prepare_tf32,
    capabilities=TF32_CAPABILITIES,
    tolerances=gemmreg.standard_tolerances(TF32_PRECISION),
    available=tf32_unavailable,
    vendor_library=True,
)
"""Registered through an entry point of its own (``gemmreg_plugins.torch_ref:TORCH_REF_TF32``),
so it can be selected or blocked apart from torch_ref."""


TORCH_REF = gemmreg.KernelSpec(
    name="torch_ref",
    summary="torch.mm: the vendor library (cuBLAS / hipBLAS / CPU BLAS)",
    prepare=prepare,
    capabilities=CAPABILITIES,
    tolerances=TOLERANCES,
    vendor_library=True,
)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(TORCH_REF)
