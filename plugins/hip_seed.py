"""What the two seed HIP plugins share: read the ``.hip`` file, compile it at
run time (NVRTC on CUDA builds of torch, hiprtc on ROCm) and launch it with the
seed's 16x16 thread blocks, one thread per output element."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import gemmreg

if TYPE_CHECKING:
    import torch

THREADS = 16  # kTile in the seed: 16x16 threads per block
INT32_MAX = 2**31 - 1  # the sizes travel as 32-bit C ints

PRECISION = gemmreg.Precision(math="ieee_fp32", detail="scalar FMA")
TOLERANCE = gemmreg.Tolerance(
    rtol=3e-5,
    atol=1e-6,
    why="IEEE fp32: rounding grows about like u*sqrt(K) of |A|@|B|; the seed allowed 1e-3",
)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def capabilities(k_step: int) -> gemmreg.Capabilities:
    """fp32, row-major (the seed kernels hard-code row-major strides), 16x16
    outputs per block; ``k_step`` is 16 for the tiled kernel, 1 for the naive."""
    return gemmreg.Capabilities(
        dtypes={"fp32"},
        backends={"cuda", "rocm"},
        precision={"fp32": PRECISION},
        layouts={"rowmajor"},
        max_dim=INT32_MAX,
        tile=(THREADS, THREADS, k_step),
    )


def make_prepare(source_file: Path, kernel_name: str, caps: gemmreg.Capabilities):
    def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
        caps.require(problem)  # fp32 row-major only: refuse anything else
        compiled = gemmreg.compile_kernel(source_file.read_text(), kernel_name)
        grid = (_ceil_div(problem.n, THREADS), _ceil_div(problem.m, THREADS), 1)
        block = (THREADS, THREADS, 1)
        m, n, k = problem.m, problem.n, problem.k

        def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
            compiled.launch(grid, block, (a, b, out, m, n, k))

        return launch

    return prepare


def spec(
    name: str, source_file: Path, kernel_name: str, summary: str, k_step: int
) -> gemmreg.KernelSpec:
    caps = capabilities(k_step)
    return gemmreg.KernelSpec(
        name=name,
        summary=summary,
        prepare=make_prepare(source_file, kernel_name, caps),
        capabilities=caps,
        tolerances={"fp32": TOLERANCE},
        available=gemmreg.compile_unavailable,
        sources=(str(source_file),),
    )
