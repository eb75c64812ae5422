"""The grouped GEMM's TMA form (Hopper on): the same persistent walk over the
tile table as :mod:`.grouped_kernel`, but A, B and C move through TMA
descriptors made on the device, one per operand and tile, each bounded by
the tile's own member.

Why per tile, on the device: TMA clips a box only at its descriptor's
bounds. A descriptor of all of A would let a member's last tile read the
next member's first rows, and one of all of C would let that tile *write*
them. So A's and C's descriptors start at the tile's first row and end at
its member's last (``rows``), B's is its member's own k x n (or n x k)
weight: nothing outside the member is read or written, and every tail
(rows, columns, K) is zero-filled on load and clipped on store by the
hardware, with no masks. Making a descriptor costs a write of 128 bytes
and a fence, against the tens of microseconds of one 128-row tile's K loop
at an MoE layer's k (4096 or 14336).

Why TMA at all: on the H200 the dense paths' pointer tiles of 128 x 256 (and
128 x 128) ran 1.2-2.6x slower than ``torch.mm`` at 128 to 2048 rows with a
transposed-view B, where the persistent TMA tiles of the same size ran
within 1-7% of it (``evidence/2026-12-04-h200-llm-projections/probe``).

The tile's product and its store are the dense persistent kernel's own
(:mod:`.tile_parts`), so the K loop and the split epilogue cannot drift
from the measured ones. With ``FLATTEN`` the compiler flattens the tile and
K loops into one it pipelines across tiles (the dense path's ``-flat``),
making the next tile's descriptors while the last one's loads are in flight
(it keeps one per stage). The launch needs a global scratch allocator
(device descriptors live there): :mod:`.grouped_tma` sets one per call.

With ``SHARED`` (the config's ``shared``) a tile makes one descriptor, its
member's B, instead of three: A is read through one descriptor of all its
rows, made once per program (a tile's rows past its member then read the
next member's rows of A, inside A, into accumulator rows that are never
stored), and C is written through one descriptor of all its rows wherever
the tile lies wholly inside its member; only a member's last, partial tile
makes its own C descriptor, bounded at the member's last row. At Mixtral's
prefill routing in 128-row tiles, 63 of the 66 row tiles are whole; a probe
weighs this form against the per-tile one.

With ``WHOLE_B`` too (the host sets it for ``SHARED`` where B is a transposed
view of N x K weights lying back to back, as a stacked ``nn.Linear`` weight
of experts does), B is read through one descriptor of all the weights'
``b_rows`` = groups x N rows, also made once per program, at row
member x N + the tile's column: no descriptor is made per tile but a member's
last partial C. A tile's columns past N then read the next member's first
rows (or, past the last member, zeros), into accumulator columns that C's
descriptor, N wide, never stores; K's tail is zero-filled as before, since
the descriptor ends at k. A row-major B gets no such descriptor: its members
meet along K, and a K tail would read the next member's rows into the sum.
"""

from __future__ import annotations

import functools
from typing import Any

_tile_acc: Any = None
_tile_origin: Any = None
_member_rows: Any = None
_store_tile: Any = None
""":mod:`.tile_parts`' jitted pieces, set when the kernel is built: module
globals, because Triton's interpreter re-runs a kernel's source without
its closures."""


@functools.cache
def grouped_tma_kernel() -> Any:
    import triton
    import triton.language as tl
    from gemmreg_plugins.triton_tuned import tile_parts

    global _tile_acc, _tile_origin, _member_rows, _store_tile
    _tile_acc, _tile_origin = tile_parts.tile_acc, tile_parts.tile_origin
    _member_rows, _store_tile = tile_parts.member_rows, tile_parts.store_tile

    @triton.jit
    def gemm_grouped_tma(
        a_ptr,
        b_ptr,
        c_ptr,
        table_ptr,
        entries,
        m,
        n,
        k,
        stride_am,
        stride_bg,
        stride_b_outer,
        stride_cm,
        b_rows,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        BLOCK_K: tl.constexpr,
        GROUP_M: tl.constexpr,
        B_TRANSPOSED: tl.constexpr,
        EPILOGUE_PARTS: tl.constexpr,
        INPUT_PRECISION: tl.constexpr,
        FLATTEN: tl.constexpr = False,
        SHARED: tl.constexpr = False,
        WHOLE_B: tl.constexpr = False,
    ):
        if SHARED:  # once per program: A's and C's rows, every member's
            a_all = tl.make_tensor_descriptor(
                a_ptr, shape=[m, k], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K]
            )
            c_all = tl.make_tensor_descriptor(
                c_ptr,
                shape=[m, n],
                strides=[stride_cm, 1],
                block_shape=[BLOCK_M, BLOCK_N // EPILOGUE_PARTS],
            )
        if WHOLE_B:  # every member's N x K weight, back to back: b_rows x k
            b_all = tl.make_tensor_descriptor(
                b_ptr,
                shape=[b_rows, k],
                strides=[stride_b_outer, 1],
                block_shape=[BLOCK_N, BLOCK_K],
            )
        tiles_n = tl.cdiv(n, BLOCK_N)
        tiles = entries * tiles_n
        k_tiles = tl.cdiv(k, BLOCK_K)
        tiles_per_group = GROUP_M * tiles_n
        for tile in tl.range(
            tl.program_id(axis=0), tiles, tl.num_programs(axis=0), flatten=FLATTEN
        ):
            # the grouped order over entries: an entry is a tile row of height 1 here
            entry, off_n = _tile_origin(tile, entries, tiles_per_group, GROUP_M, 1, BLOCK_N)

            row = table_ptr + entry * 3  # TABLE_FIELDS
            member = tl.load(row).to(tl.int64)
            first = tl.load(row + 1)
            rows = tl.load(row + 2) - first  # this tile's first row to its member's last
            first = first.to(tl.int64)

            b_n = off_n  # the tile's first column: B's row (transposed) or column
            if WHOLE_B:  # the member's rows of the whole weight's descriptor
                b_desc = b_all
                b_n = (member * n).to(tl.int32) + off_n
            elif B_TRANSPOSED:  # the member's weight as stored: N x K, K contiguous
                b_desc = tl.make_tensor_descriptor(
                    b_ptr + member * stride_bg,
                    shape=[n, k],
                    strides=[stride_b_outer, 1],
                    block_shape=[BLOCK_N, BLOCK_K],
                )
            else:
                b_desc = tl.make_tensor_descriptor(
                    b_ptr + member * stride_bg,
                    shape=[k, n],
                    strides=[stride_b_outer, 1],
                    block_shape=[BLOCK_K, BLOCK_N],
                )
            if SHARED:
                row = first.to(tl.int32)  # TMA coordinates are 32-bit
                acc = _tile_acc(a_all, b_desc, row, b_n, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K,
                                False, B_TRANSPOSED, False, INPUT_PRECISION)  # fmt: skip
                if rows >= BLOCK_M:  # wholly inside its member
                    _store_tile(c_all, acc, row, off_n, BLOCK_M, BLOCK_N, EPILOGUE_PARTS)
                else:  # the member's last tile: bounded at its last row
                    c_desc = _member_rows(c_ptr, first, rows, n, stride_cm, BLOCK_M,
                                          BLOCK_N // EPILOGUE_PARTS)  # fmt: skip
                    _store_tile(c_desc, acc, 0, off_n, BLOCK_M, BLOCK_N, EPILOGUE_PARTS)
            else:
                a_desc = _member_rows(a_ptr, first, rows, k, stride_am, BLOCK_M, BLOCK_K)
                c_desc = _member_rows(c_ptr, first, rows, n, stride_cm, BLOCK_M,
                                      BLOCK_N // EPILOGUE_PARTS)  # fmt: skip
                acc = _tile_acc(a_desc, b_desc, 0, b_n, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K,
                                False, B_TRANSPOSED, False, INPUT_PRECISION)  # fmt: skip
                _store_tile(c_desc, acc, 0, off_n, BLOCK_M, BLOCK_N, EPILOGUE_PARTS)

    return gemm_grouped_tma
