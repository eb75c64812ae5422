"""The fp8 GEMM through TMA, one tile of C per program (its host side is
:func:`.fp8.run`, for ``Fp8Config.tma``): K cut into ``SPLIT_K`` ranges (the
split-K hand-over, :mod:`.hand_over`), or, K whole, the
tile in ``PIECES`` (:mod:`.tma_pieces_kernel`: ``BLOCK_N`` columns and its
half and quarter beside them). A is row-major and B a transposed view of a
row-major N x K weight: fp8 ``wgmma`` reads both K-major, which TMA boxes of
the weight as it lies give. Partial sums are promoted into fp32 every
``PROMOTE_EVERY`` elements of K, as :mod:`.fp8_kernel` explains; the scales
multiply the fp32 tile once it is whole (after the splits are added), as
``torch._scaled_mm`` defines them.

Why: at 128 tokens the fp8 kernels' tiles cannot fill the H200 either.
128x4096x14336 takes 32 tiles of 128 x 128 (cuBLASLt's choice there, 36.5
us against a weight that streams in about 12) and the pointer kernel's 64 x
64 tiles 128 programs each with 112 K steps; 128x14336x4096 takes 112
tiles of 128 x 128 on 132 SMs, where 112-column tiles give 128
(``report --kernels`` of ``evidence/2026-12-04-h200-llm-fp16-fp8-tf32/fp8-llm-128``).

Only :mod:`.fp8` imports this module, when a TMA config runs, for the
reasons :mod:`.tile_parts` gives.
"""

import triton
import triton.language as tl
from gemmreg_plugins.triton_tuned.hand_over import leave_partial, sum_partials


@triton.jit
def _scaled_store(c_desc, acc, sa_ptr, sb_ptr, off_m, off_n, m, n, stride_sa, stride_sb,
                  BLOCK_M: tl.constexpr, WIDTH: tl.constexpr, ROWWISE: tl.constexpr):  # fmt: skip
    """C's box at (off_m, off_n): the fp32 tile times its scales, rounded once."""
    if ROWWISE:
        rows = off_m + tl.arange(0, BLOCK_M)
        cols = off_n + tl.arange(0, WIDTH)
        scale_a = tl.load(sa_ptr + rows.to(tl.int64) * stride_sa, mask=rows < m, other=0.0)
        scale_b = tl.load(sb_ptr + cols.to(tl.int64) * stride_sb, mask=cols < n, other=0.0)
        acc = acc * scale_a[:, None] * scale_b[None, :]
    else:
        acc = acc * (tl.load(sa_ptr) * tl.load(sb_ptr))
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def gemm_fp8_tma(a_desc, b_desc, b_half, b_quarter, c_desc, c_half, c_quarter, sa_ptr, sb_ptr,
                 ws_ptr, count_ptr, m, n, k, stride_sa, stride_sb, blocks_per_split,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 PIECES: tl.constexpr, COLUMNS: tl.constexpr, SPLIT_K: tl.constexpr,
                 ROWWISE: tl.constexpr, PROMOTE_EVERY: tl.constexpr):  # fmt: skip
    tile = tl.program_id(axis=0)
    split = tl.program_id(axis=1)
    tiles_m = tl.cdiv(m, BLOCK_M)
    off_m = (tile % tiles_m) * BLOCK_M
    off_n = (tile // tiles_m) * COLUMNS
    HALF: tl.constexpr = BLOCK_N // 2
    QUARTER: tl.constexpr = BLOCK_N // 4
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_half = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    acc_quarter = tl.zeros((BLOCK_M, QUARTER), dtype=tl.float32)
    first = split * blocks_per_split
    end = tl.minimum(first + blocks_per_split, tl.cdiv(k, BLOCK_K))
    for kk in range(first, end):
        off_k = kk * BLOCK_K
        a = a_desc.load([off_m, off_k])
        b = b_desc.load([off_n, off_k]).T  # the weight's N x K box, read K-major
        acc = tl.dot(a, b, acc, max_num_imprecise_acc=PROMOTE_EVERY)
        if PIECES >= 2:
            b = b_half.load([off_n + BLOCK_N, off_k]).T
            acc_half = tl.dot(a, b, acc_half, max_num_imprecise_acc=PROMOTE_EVERY)
        if PIECES >= 3:
            b = b_quarter.load([off_n + BLOCK_N + HALF, off_k]).T
            acc_quarter = tl.dot(a, b, acc_quarter, max_num_imprecise_acc=PROMOTE_EVERY)
    if SPLIT_K == 1:
        _scaled_store(c_desc, acc, sa_ptr, sb_ptr, off_m, off_n, m, n, stride_sa, stride_sb,
                      BLOCK_M, BLOCK_N, ROWWISE)  # fmt: skip
        if PIECES >= 2:
            _scaled_store(c_half, acc_half, sa_ptr, sb_ptr, off_m, off_n + BLOCK_N, m, n,
                          stride_sa, stride_sb, BLOCK_M, HALF, ROWWISE)  # fmt: skip
        if PIECES >= 3:
            _scaled_store(c_quarter, acc_quarter, sa_ptr, sb_ptr, off_m, off_n + BLOCK_N + HALF,
                          m, n, stride_sa, stride_sb, BLOCK_M, QUARTER, ROWWISE)  # fmt: skip
    else:
        # The split-K hand-over (:mod:`.hand_over`); the scales come after the sum.
        at = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
        if leave_partial(ws_ptr, count_ptr, tile, split, acc, at, SPLIT_K, BLOCK_M * BLOCK_N):
            total = sum_partials(ws_ptr, count_ptr, tile, at, SPLIT_K, BLOCK_M * BLOCK_N)
            _scaled_store(c_desc, total, sa_ptr, sb_ptr, off_m, off_n, m, n, stride_sa,
                          stride_sb, BLOCK_M, BLOCK_N, ROWWISE)  # fmt: skip
