"""The stream-K tail as a jit function the persistent kernel calls
(:mod:`.stream_k` says why, and how the tail is chosen and its buffers kept).

Only the kernel builder imports this module, for the reasons
:mod:`.tile_parts` gives.
"""

import triton
import triton.language as tl
from gemmreg_plugins.triton_tuned.hand_over import leave_partial
from gemmreg_plugins.triton_tuned.tile_parts import store_tile, tile_acc, tile_origin


@triton.jit
def stream_k_tail(a_desc, b_desc, c_desc, ws_ptr, count_ptr, pid, tiles_m, tiles_per_group,
                  k_tiles, tail_tiles, dp_tiles, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, PROGRAMS: tl.constexpr,
                  A_TRANSPOSED: tl.constexpr, B_TRANSPOSED: tl.constexpr,
                  EPILOGUE_PARTS: tl.constexpr, INPUT_PRECISION: tl.constexpr,
                  TF32_SWAP: tl.constexpr, REVERSED: tl.constexpr):  # fmt: skip
    """The K steps of tiles ``dp_tiles`` on, cut into ``PROGRAMS`` equal
    ranges; this program's range covers the end of one tile, maybe a whole
    one, and the start of another (at most three). A whole tile is stored
    at once; a tile cut in two has each piece written to its slot, and the
    second piece to arrive adds the other to its own and stores C.
    ``REVERSED`` (tests only) hands the ranges out last to first, so that
    under the interpreter, which runs programs in order, a tile's first
    piece is the one to arrive second."""
    if REVERSED:
        pid = PROGRAMS - 1 - pid
    total = tail_tiles.to(tl.int64) * k_tiles
    start = pid.to(tl.int64) * total // PROGRAMS
    stop = (pid.to(tl.int64) + 1) * total // PROGRAMS
    first = start // k_tiles
    # Offsets inside a slot fit 32 bits (a tile is at most 2^16 elements);
    # the slot's base is a 64-bit scalar. 64-bit offsets here cost a tile's
    # worth of register pairs.
    at = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    for j in tl.static_range(3):
        t = first + j
        lo = tl.maximum(start, t * k_tiles)
        hi = tl.minimum(stop, (t + 1) * k_tiles)
        if lo < hi:
            off_m, off_n = tile_origin(
                (dp_tiles + t).to(tl.int32), tiles_m, tiles_per_group, GROUP_M, BLOCK_M, BLOCK_N
            )
            acc = tile_acc(
                a_desc,
                b_desc,
                off_m,
                off_n,
                (lo - t * k_tiles).to(tl.int32),
                (hi - t * k_tiles).to(tl.int32),
                BLOCK_M,
                BLOCK_N,
                BLOCK_K,
                A_TRANSPOSED,
                B_TRANSPOSED,
                TF32_SWAP,
                INPUT_PRECISION,
            )
            if hi - lo == k_tiles:
                store_tile(c_desc, acc, off_m, off_n, BLOCK_M, BLOCK_N, EPILOGUE_PARTS)
            else:
                # Slot 0 holds the piece with the tile's first K step. The sum of
                # two pieces is the same whichever adds (a + b == b + a exactly),
                # so C is the same bits whoever arrives second.
                piece = (lo != t * k_tiles).to(tl.int64)
                if leave_partial(ws_ptr, count_ptr, t, piece, acc, at, 2, BLOCK_M * BLOCK_N):
                    tl.debug_barrier()  # the acquire (one thread's) before every load
                    slots = ws_ptr + t * (2 * BLOCK_M * BLOCK_N)
                    other = tl.load(
                        slots + (1 - piece) * (BLOCK_M * BLOCK_N) + at, cache_modifier=".cg"
                    )
                    total_acc = acc + other
                    store_tile(c_desc, total_acc, off_m, off_n, BLOCK_M, BLOCK_N, EPILOGUE_PARTS)
                    tl.atomic_xchg(count_ptr + t, 0, sem="relaxed")  # clean for the next call
