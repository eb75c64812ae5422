"""torch_ref: ``torch.mm`` on whatever device is present (cuBLAS, hipBLAS or
the CPU BLAS). The reference point every other kernel is compared against.

Its fp32 precision relies on the core pinning torch's matmul flags in every
worker (TF32 and reduced-precision reductions off), which the core does for
every kernel: a plugin never sets torch's global flags itself.
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
    constraint=_cpu_bf16_padded,
)


def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
    import torch

    CAPABILITIES.require(problem)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        torch.mm(a, b, out=out)

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        gemmreg.KernelSpec(
            name="torch_ref",
            summary="torch.mm: the vendor library (cuBLAS / hipBLAS / CPU BLAS)",
            prepare=prepare,
            capabilities=CAPABILITIES,
            tolerances=TOLERANCES,
            vendor_library=True,
        )
    )
