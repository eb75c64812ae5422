"""hip_regtiled: a register-tiled IEEE fp32 HIP GEMM, ``matmul_regtiled.hip``.

The classic register-tiled SGEMM design, where the seed's ``hip_tiled`` keeps
one output per thread:

- **Tiles:** a block of 256 threads computes a 128x128 tile of C and steps
  through K 8 at a time (``tile=(128, 128, 8)``); a 1-D grid of
  ceil(M/128) * ceil(N/128) blocks.
- **Per thread:** 8x8 outputs in registers, split 2x(4x4) (rows ``ty*4+i`` and
  ``64+ty*4+i``, columns ``tx*4+j`` and ``64+tx*4+j``), so that per k a thread
  makes four 16-byte shared-memory reads, conflict-free, and 64 FMAs. A's
  128x8 slice is stored transposed in shared memory (rows padded to 132 floats
  against bank conflicts on the transposed stores), so A is read as float4
  along M like B along N.
- **Vectorisation:** each thread loads one 4-element piece of A and one of B
  per K step, as one 16-byte global load when legal (the operand's base is
  16-byte aligned, its row stride a multiple of 4 elements, and the whole piece
  inside the matrix), else as four guarded scalar loads with zeros past the
  edge. The kernel decides this itself from the pointers and strides, so no
  caller can pick the fast path wrongly; C's stores follow the same rule.
- **Double buffering:** two shared buffers; the next K step's global loads
  are in registers, in flight, while the block runs the FMAs of the current
  one, so one barrier per K step.
- **Edges:** arbitrary M, N, K >= 1; every thread runs every K step and
  reaches every barrier; offsets are 64-bit; padded rows are never read.

ptxas (sm_90, ``__launch_bounds__(256, 2)``): 128 registers, no spills, no
stack frame, 16,640 bytes of static shared memory, so two blocks per SM.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import gemmreg
from gemmreg_plugins import hip_seed

if TYPE_CHECKING:
    import torch

SOURCE = Path(__file__).with_name("matmul_regtiled.hip")
KERNEL = "matmul_regtiled"

BLOCK_M = 128
BLOCK_N = 128
BLOCK_K = 8
THREADS = 256  # one 1-D block; the kernel's __launch_bounds__ says the same
MAX_BLOCKS = 2**31 - 1  # gridDim.x limit: the grid is 1-D


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _block_count(problem: gemmreg.Problem) -> int:
    return _ceil_div(problem.m, BLOCK_M) * _ceil_div(problem.n, BLOCK_N)


def _grid_limit(problem: gemmreg.Problem) -> str | None:
    """The 1-D grid must fit gridDim.x. Only a C of more than about 3.5e13
    elements (far beyond any GPU's memory) reaches it, but say so rather than
    fail at launch."""
    blocks = _block_count(problem)
    if blocks > MAX_BLOCKS:
        return f"needs {blocks} blocks of {BLOCK_M}x{BLOCK_N}; a 1-D grid holds {MAX_BLOCKS}"
    return None


CAPABILITIES = gemmreg.Capabilities(
    dtypes={"fp32"},
    backends={"cuda", "rocm"},
    precision={
        "fp32": gemmreg.Precision(
            math="ieee_fp32",
            detail="scalar FMA, register-tiled 8x8 per thread, fp32 accumulator",
        )
    },
    # Row strides are kernel arguments, so row-major views into wider buffers
    # (``padded``) work as well as contiguous operands. Transposed operands
    # would need a column stride too; they are not declared, so they are
    # reported as skipped.
    layouts={"rowmajor", "padded"},
    max_dim=hip_seed.INT32_MAX,  # sizes and strides travel as 32-bit C ints
    constraint=_grid_limit,
    tile=(BLOCK_M, BLOCK_N, BLOCK_K),
)


def _row_stride(x: torch.Tensor, name: str) -> int:
    """The row stride of a matrix whose elements within a row are adjacent.

    The kernel takes only row strides, so a tensor with any other inner stride
    (a transposed view) would be read wrongly: refuse it instead. A stride must
    also fit the 32-bit int the launcher passes."""
    rows, cols = x.shape
    if cols > 1 and x.stride(1) != 1:
        raise gemmreg.UnsupportedProblem(
            f"{name}: elements of a row must be adjacent (stride {x.stride()})"
        )
    # A single row's stride is never used to form an address (row 0 starts at
    # the base), and torch may report anything there: pass the row length.
    stride = x.stride(0) if rows > 1 else cols
    if stride > hip_seed.INT32_MAX:
        raise gemmreg.UnsupportedProblem(f"{name}: row stride {stride} exceeds a 32-bit int")
    return stride


def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
    """Compile once (cached per process) and fix the grid; strides are read
    from the tensors at each launch, since the layout decides them."""
    CAPABILITIES.require(problem)  # fp32, row-major or padded only: refuse anything else
    compiled = gemmreg.compile_kernel(SOURCE.read_text(), KERNEL)
    grid = (_block_count(problem), 1, 1)
    block = (THREADS, 1, 1)
    m, n, k = problem.m, problem.n, problem.k

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        lda = _row_stride(a, "A")
        ldb = _row_stride(b, "B")
        ldc = _row_stride(out, "C")
        compiled.launch(grid, block, (a, b, out, m, n, k, lda, ldb, ldc))

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        gemmreg.KernelSpec(
            name="hip_regtiled",
            summary="HIP GEMM: 128x128x8 tiles, 8x8 outputs per thread, float4 loads, double buffered",
            prepare=prepare,
            capabilities=CAPABILITIES,
            tolerances={"fp32": hip_seed.TOLERANCE},
            available=gemmreg.compile_unavailable,
            sources=(str(SOURCE),),
        )
    )
