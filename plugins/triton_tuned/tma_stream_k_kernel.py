"""The TMA stream-K kernel as a jit function (its host side, and why it
exists, is :mod:`.tma_stream_k`).

Program ``p`` of ``PROGRAMS`` takes the ``p``-th of ``PROGRAMS`` equal ranges
of every tile's K steps laid end to end (tile after tile, the tiles in the
TMA split-K kernel's order), so a range may end one tile, cover others whole
and start another (``MAX_TILES`` at most). A tile its range covers whole is
stored at once; a tile cut into pieces has each piece written to its slot
(the piece's place among the tile's pieces, in K order), the last piece to
arrive adds the slots in that order and stores C (:mod:`.hand_over`'s
pieces), so C is the same bits whichever arrives last.

Only the launcher imports this module, for the reasons :mod:`.tile_parts`
gives.
"""

import triton
import triton.language as tl
from gemmreg_plugins.triton_tuned.hand_over import leave_piece, sum_pieces
from gemmreg_plugins.triton_tuned.tile_parts import store_tile, tile_acc


@triton.jit
def gemm_tma_stream_k(a_desc, b_desc, c_desc, ws_ptr, count_ptr, m, n, k, tiles,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      PROGRAMS: tl.constexpr, MAX_TILES: tl.constexpr,
                      MAX_PIECES: tl.constexpr, A_TRANSPOSED: tl.constexpr,
                      B_TRANSPOSED: tl.constexpr, INPUT_PRECISION: tl.constexpr,
                      REVERSED: tl.constexpr = False):  # fmt: skip
    pid = tl.program_id(axis=0)
    if REVERSED:  # tests only: under the interpreter a tile's last piece then arrives first
        pid = PROGRAMS - 1 - pid
    k_tiles = tl.cdiv(k, BLOCK_K)
    total = tiles.to(tl.int64) * k_tiles
    start = pid.to(tl.int64) * total // PROGRAMS
    stop = (pid.to(tl.int64) + 1) * total // PROGRAMS
    first = start // k_tiles
    tiles_m = tl.cdiv(m, BLOCK_M)
    at = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    for j in tl.static_range(MAX_TILES):
        t = first + j
        lo = tl.maximum(start, t * k_tiles)
        hi = tl.minimum(stop, (t + 1) * k_tiles)
        if lo < hi:
            tile = t.to(tl.int32)
            off_m = (tile % tiles_m) * BLOCK_M  # row tiles fastest, as the TMA split-K kernel
            off_n = (tile // tiles_m) * BLOCK_N
            acc = tile_acc(a_desc, b_desc, off_m, off_n, (lo - t * k_tiles).to(tl.int32),
                           (hi - t * k_tiles).to(tl.int32), BLOCK_M, BLOCK_N, BLOCK_K,
                           A_TRANSPOSED, B_TRANSPOSED, False, INPUT_PRECISION)  # fmt: skip
            if hi - lo == k_tiles:
                store_tile(c_desc, acc, off_m, off_n, BLOCK_M, BLOCK_N, 1)
            else:
                # The programs that share the tile: from the one whose range holds
                # its first K step to the one that holds its last (each range is
                # one step or more long, so none between is empty).
                opener = ((t * k_tiles + 1) * PROGRAMS - 1) // total
                closer = ((t + 1) * k_tiles * PROGRAMS - 1) // total
                pieces = (closer - opener + 1).to(tl.int32)
                piece = (pid - opener).to(tl.int32)
                if leave_piece(ws_ptr, count_ptr, tile, piece, acc, at, pieces, MAX_PIECES,
                               BLOCK_M * BLOCK_N):  # fmt: skip
                    whole = sum_pieces(ws_ptr, count_ptr, tile, at, pieces, MAX_PIECES,
                                       BLOCK_M * BLOCK_N)  # fmt: skip
                    store_tile(c_desc, whole, off_m, off_n, BLOCK_M, BLOCK_N, 1)
