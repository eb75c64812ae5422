"""The split-K kernel as a jit function (its host side, and why it exists,
is :mod:`.split_k`).

It multiplies X (ROWS x K) by Y (K x COLS) into C (ROWS x COLS), all three
through pointers and strides: the launcher hands it A, B and C, or, for
swap-AB, B^T, A^T and C^T, which are the same storage read with their
strides exchanged. Program (tile, split) computes one tile over one range of
K blocks; with ``SPLIT_K`` > 1 it writes that partial product to its slot of
an fp32 workspace, and the last of a tile's programs to arrive (an
acquire-release counter per tile) adds the slots up in split order, stores C
and puts the counter back to 0: the hand-over of :mod:`.hand_over`. Adding in
split order, not in arrival order, makes C the same bits whichever program
arrives last.

Offsets are int64 before they meet a stride; every load and store is
masked on rows and columns, and on K unless ``EVEN_K`` says K is a whole
number of blocks. ``X_K_UNIT`` / ``Y_K_UNIT`` say that operand's K stride
is 1 (row-major A, and a transposed-view B, a weight stored row-major):
written as a literal 1, the compiler knows the K axis is contiguous and
loads it in 16-byte vectors, which a memory-bound decode GEMM needs.

Only the launcher imports this module (never the plugin's import), for the
reasons :mod:`.tile_parts` gives.
"""

import triton
import triton.language as tl
from gemmreg_plugins.triton_tuned.hand_over import leave_partial, sum_partials


@triton.jit
def gemm_split_k(x_ptr, y_ptr, c_ptr, ws_ptr, count_ptr, rows, cols, k, stride_xr, stride_xk,
                 stride_yk, stride_yc, stride_cr, stride_cc, blocks_per_split,
                 BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_K: tl.constexpr,
                 SPLIT_K: tl.constexpr, X_K_UNIT: tl.constexpr, Y_K_UNIT: tl.constexpr,
                 EVEN_K: tl.constexpr, INPUT_PRECISION: tl.constexpr,
                 REVERSED: tl.constexpr = False):  # fmt: skip
    tile = tl.program_id(axis=0)
    split = tl.program_id(axis=1)
    if REVERSED:  # tests only: under the interpreter the first split then arrives last
        split = SPLIT_K - 1 - split
    # Row tiles vary fastest: the programs launched together share a column
    # block of Y (B, the weight, when A is not swapped; with swap-AB there is
    # one column tile and they walk down the weight's rows).
    tiles_r = tl.cdiv(rows, BLOCK_R)
    tile_r = tile % tiles_r
    tile_c = tile // tiles_r
    offs_r = (tile_r * BLOCK_R + tl.arange(0, BLOCK_R)).to(tl.int64)
    offs_c = (tile_c * BLOCK_C + tl.arange(0, BLOCK_C)).to(tl.int64)
    first = split * blocks_per_split
    blocks = tl.minimum(blocks_per_split, tl.cdiv(k, BLOCK_K) - first)
    kk = tl.arange(0, BLOCK_K)
    offs_k = first.to(tl.int64) * BLOCK_K + kk.to(tl.int64)
    if X_K_UNIT:
        x_ptrs = x_ptr + offs_r[:, None] * stride_xr + offs_k[None, :]
        x_step = BLOCK_K
    else:
        x_ptrs = x_ptr + offs_r[:, None] * stride_xr + offs_k[None, :] * stride_xk
        x_step = BLOCK_K * stride_xk.to(tl.int64)
    if Y_K_UNIT:
        y_ptrs = y_ptr + offs_k[:, None] + offs_c[None, :] * stride_yc
        y_step = BLOCK_K
    else:
        y_ptrs = y_ptr + offs_k[:, None] * stride_yk + offs_c[None, :] * stride_yc
        y_step = BLOCK_K * stride_yk.to(tl.int64)
    mask_r = offs_r[:, None] < rows
    mask_c = offs_c[None, :] < cols
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for i in range(0, blocks):
        if EVEN_K:
            x = tl.load(x_ptrs, mask=mask_r, other=0.0)
            y = tl.load(y_ptrs, mask=mask_c, other=0.0)
        else:
            k_left = k - (first + i) * BLOCK_K
            x = tl.load(x_ptrs, mask=mask_r & (kk[None, :] < k_left), other=0.0)
            y = tl.load(y_ptrs, mask=(kk[:, None] < k_left) & mask_c, other=0.0)
        acc = tl.dot(x, y, acc, input_precision=INPUT_PRECISION)
        x_ptrs += x_step
        y_ptrs += y_step
    # C's pointers (a 64-bit register pair per element) are made where C is
    # stored, never held across the hand-over beside the partial tile, its
    # slot offsets and the sum: held there, they took the split forms to up to
    # 255 registers, spilling in three to four of the five plain tiles (sm_90).
    if SPLIT_K == 1:
        c_ptrs = c_ptr + offs_r[:, None] * stride_cr + offs_c[None, :] * stride_cc
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_r & mask_c)
    else:
        at = tl.arange(0, BLOCK_R)[:, None] * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
        if leave_partial(ws_ptr, count_ptr, tile, split, acc, at, SPLIT_K, BLOCK_R * BLOCK_C):
            total = sum_partials(ws_ptr, count_ptr, tile, at, SPLIT_K, BLOCK_R * BLOCK_C)
            c_ptrs = c_ptr + offs_r[:, None] * stride_cr + offs_c[None, :] * stride_cc
            tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty), mask=mask_r & mask_c)
