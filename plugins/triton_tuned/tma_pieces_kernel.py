"""The TMA split-K path's tile in pieces (``Config.pieces``), K unsplit: one
tile of C per program whose columns are ``BLOCK_N`` and, beside them, its
half (``PIECES`` 2) and then its quarter (3): 64 + 32 + 16 = 112 columns for
``BLOCK_N`` 64, each piece its own TMA box of B and of C and its own
``tl.dot`` on the same tile of A.

Why: Triton's blocks are powers of two, and where a problem's tiles cannot
fill the GPU the width of a tile decides how much of it idles. At Llama 3
8B's 128 tokens by 14336 columns (``up``/``gate``), 128-column tiles make
112 programs on the H200's 132 SMs, each streaming 128 columns of the
weight; 112-column tiles make 128 programs, each streaming 112. A program
that streams its weight once does 7/8 of the work, and cuBLAS's kernel at
that shape takes tiles 112 columns wide for that reason (its name there
reads ``112x128`` in C^T's terms, ``evidence/2026-12-04-h200-llm-projections``,
``report --kernels``). The pieces share A's box each K step, so the cost is
two more ``wgmma`` of 32 and 16 columns (the least ``wgmma`` takes is 8)
and two more stores.

Row tiles vary fastest, as in :mod:`.tma_split_k_kernel`; TMA zero-fills
boxes past the tensor's edge and clips stores, so a piece past N does
nothing. Only the launcher imports this module, for the reasons
:mod:`.tile_parts` gives.
"""

import triton
import triton.language as tl


@triton.jit
def _b_box(b_desc, off_k, off_n, B_TRANSPOSED: tl.constexpr):
    """B's K x N box at (off_k, off_n); a transposed B through its N x K transpose."""
    if B_TRANSPOSED:  # noqa: SIM108 (a constexpr branch, as the compiler sees it)
        b = b_desc.load([off_n, off_k]).T
    else:
        b = b_desc.load([off_k, off_n])
    return b


@triton.jit
def gemm_tma_pieces(a_desc, b_desc, b_half, b_quarter, c_desc, c_half, c_quarter, m, n, k,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    PIECES: tl.constexpr, COLUMNS: tl.constexpr, A_TRANSPOSED: tl.constexpr,
                    B_TRANSPOSED: tl.constexpr, INPUT_PRECISION: tl.constexpr):  # fmt: skip
    tile = tl.program_id(axis=0)
    tiles_m = tl.cdiv(m, BLOCK_M)
    off_m = (tile % tiles_m) * BLOCK_M
    off_n = (tile // tiles_m) * COLUMNS
    HALF: tl.constexpr = BLOCK_N // 2
    QUARTER: tl.constexpr = BLOCK_N // 4
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_half = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    acc_quarter = tl.zeros((BLOCK_M, QUARTER), dtype=tl.float32)
    for kk in range(0, tl.cdiv(k, BLOCK_K)):
        off_k = kk * BLOCK_K
        if A_TRANSPOSED:  # noqa: SIM108
            a = a_desc.load([off_k, off_m]).T  # A^T is K x M, contiguous
        else:
            a = a_desc.load([off_m, off_k])
        b = _b_box(b_desc, off_k, off_n, B_TRANSPOSED)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        if PIECES >= 2:
            b = _b_box(b_half, off_k, off_n + BLOCK_N, B_TRANSPOSED)
            acc_half = tl.dot(a, b, acc_half, input_precision=INPUT_PRECISION)
        if PIECES >= 3:
            b = _b_box(b_quarter, off_k, off_n + BLOCK_N + HALF, B_TRANSPOSED)
            acc_quarter = tl.dot(a, b, acc_quarter, input_precision=INPUT_PRECISION)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))
    if PIECES >= 2:
        c_half.store([off_m, off_n + BLOCK_N], acc_half.to(c_half.dtype))
    if PIECES >= 3:
        c_quarter.store([off_m, off_n + BLOCK_N + HALF], acc_quarter.to(c_quarter.dtype))
