"""The TMA split-K kernel as a jit function (its host side, and why it
exists, is :mod:`.tma_split_k`).

Program (tile, split) computes one tile of C over one range of K steps with
the persistent kernel's own tile product (:func:`.tile_parts.tile_acc`: A and
B through TMA descriptors, a transposed operand described through its
contiguous transpose, the K loop pipelined by ``num_stages``), then, with
``SPLIT_K`` > 1, hands its partial over as :mod:`.split_k_kernel` does: an
fp32 slot per split, an acquire-release arrival counter per tile, and the last
program to arrive adds the slots in split order (C is the same bits whichever
arrives last), stores C through TMA (which clips the edges) and puts the
counter back to 0.

Only the launcher imports this module, for the reasons :mod:`.tile_parts`
gives.
"""

import triton
import triton.language as tl
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
        # A slot's offsets fit 32 bits (a tile is at most 2^16 elements); the
        # tile's slots start at a 64-bit offset.
        at = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
        slots = ws_ptr + tile.to(tl.int64) * (SPLIT_K * BLOCK_M * BLOCK_N)
        tl.store(slots + split * (BLOCK_M * BLOCK_N) + at, acc)
        tl.debug_barrier()  # every thread's partial is out before the count says so
        arrived = tl.atomic_add(count_ptr + tile, 1, sem="acq_rel")
        if arrived == SPLIT_K - 1:
            tl.debug_barrier()  # the acquire (one thread's) before every load
            total = tl.load(slots + at, cache_modifier=".cg")
            for s in range(1, SPLIT_K):
                total += tl.load(slots + s * (BLOCK_M * BLOCK_N) + at, cache_modifier=".cg")
            store_tile(c_desc, total, off_m, off_n, BLOCK_M, BLOCK_N, 1)
            tl.atomic_xchg(count_ptr + tile, 0, sem="relaxed")  # clean for the next call
