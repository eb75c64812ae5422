"""The TMA split-K kernel as a jit function (its host side, and why it
exists, is :mod:`.tma_split_k`).

Program (tile, split) computes one tile of C over one range of K steps with
the persistent kernel's own tile product (:func:`.tile_parts.tile_acc`: A and
B through TMA descriptors, a transposed operand described through its
contiguous transpose, the K loop pipelined by ``num_stages``), then, with
``SPLIT_K`` > 1, hands its partial over (:mod:`.hand_over`): an
fp32 slot per split, an acquire-release arrival counter per tile, and the last
program to arrive adds the slots in split order (C is the same bits whichever
arrives last), stores C through TMA (which clips the edges) and puts the
counter back to 0.

Only the launcher imports this module, for the reasons :mod:`.tile_parts`
gives.
"""

import triton
import triton.language as tl
from gemmreg_plugins.triton_tuned.hand_over import leave_partial, sum_partials
from gemmreg_plugins.triton_tuned.tile_parts import store_tile, tile_acc


@triton.jit
def gemm_tma_split_k(a_desc, b_desc, c_desc, ws_ptr, count_ptr, m, n, k, blocks_per_split,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     SPLIT_K: tl.constexpr, A_TRANSPOSED: tl.constexpr,
                     B_TRANSPOSED: tl.constexpr, INPUT_PRECISION: tl.constexpr,
                     REVERSED: tl.constexpr = False):  # fmt: skip
    tile = tl.program_id(axis=0)
    split = tl.program_id(axis=1)
    if REVERSED:  # tests only: under the interpreter the first split then arrives last
        split = SPLIT_K - 1 - split
    # Row tiles vary fastest, and every split's programs launch together: the
    # programs in flight share A's K range and walk across the weight's columns.
    tiles_m = tl.cdiv(m, BLOCK_M)
    off_m = (tile % tiles_m) * BLOCK_M
    off_n = (tile // tiles_m) * BLOCK_N
    first = split * blocks_per_split
    end = tl.minimum(first + blocks_per_split, tl.cdiv(k, BLOCK_K))
    acc = tile_acc(a_desc, b_desc, off_m, off_n, first, end, BLOCK_M, BLOCK_N, BLOCK_K,
                   A_TRANSPOSED, B_TRANSPOSED, False, INPUT_PRECISION)  # fmt: skip
    if SPLIT_K == 1:
        store_tile(c_desc, acc, off_m, off_n, BLOCK_M, BLOCK_N, 1)
    else:
        at = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
        if leave_partial(ws_ptr, count_ptr, tile, split, acc, at, SPLIT_K, BLOCK_M * BLOCK_N):
            total = sum_partials(ws_ptr, count_ptr, tile, at, SPLIT_K, BLOCK_M * BLOCK_N)
            store_tile(c_desc, total, off_m, off_n, BLOCK_M, BLOCK_N, 1)
