"""The grouped GEMM kernel (an MoE layer's experts in one launch); its host
side, the tile table and the config, is :mod:`.grouped`.

One persistent launch walks every tile of every member: the tile table holds
one entry per ``BLOCK_M`` rows of each non-empty member (the member, its
first row, the row past its last), so a tile is (entry, column block of C),
and a program takes tiles ``pid, pid + PROGRAMS, ...``. Entries of one member
are adjacent in the table, so the grouped order (``GROUP_M`` entries walked
down one column block before moving right) reuses a member's B from L2.

A tile reads and writes only its member's rows: rows at or past the entry's
last are masked on load and store, so a member of 17 rows in a 64-row tile
never touches the next member's first rows, and an empty member has no
entry at all. Every offset is int64 before it meets a stride (``member *
stride_bg`` passes 2^31 for eight 14336 x 4096 weights).

Built on first use, as the other kernels are, so that ``TRITON_INTERPRET``
is decided before triton is imported.
"""

from __future__ import annotations

import functools
from typing import Any

TABLE_FIELDS = 3
"""Entries of the tile table: member, first row, row past the last."""


_tile_origin: Any = None
"""The grouped tile order (:func:`.tile_parts.tile_origin`), set when the
kernel is built: a module global, because Triton's interpreter re-runs a
kernel's source without its closures."""


@functools.cache
def grouped_kernel() -> Any:
    import triton
    import triton.language as tl
    from gemmreg_plugins.triton_tuned import tile_parts

    global _tile_origin
    _tile_origin = tile_parts.tile_origin

    @triton.jit
    def gemm_grouped(
        a_ptr,
        b_ptr,
        c_ptr,
        table_ptr,
        entries,
        n,
        k,
        stride_am,
        stride_ak,
        stride_bg,
        stride_bk,
        stride_bn,
        stride_cm,
        stride_cn,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        BLOCK_K: tl.constexpr,
        GROUP_M: tl.constexpr,
        INPUT_PRECISION: tl.constexpr,
    ):
        tiles_n = tl.cdiv(n, BLOCK_N)
        tiles = entries * tiles_n
        tiles_per_group = GROUP_M * tiles_n
        for tile in range(tl.program_id(axis=0), tiles, tl.num_programs(axis=0)):
            # the grouped order over entries: an entry is a tile row of height 1 here
            entry, off_n = _tile_origin(tile, entries, tiles_per_group, GROUP_M, 1, BLOCK_N)

            row = table_ptr + entry * 3  # TABLE_FIELDS
            member = tl.load(row).to(tl.int64)
            first = tl.load(row + 1).to(tl.int64)
            stop = tl.load(row + 2).to(tl.int64)

            offs_m = first + tl.arange(0, BLOCK_M).to(tl.int64)
            offs_n = (off_n + tl.arange(0, BLOCK_N)).to(tl.int64)
            offs_k = tl.arange(0, BLOCK_K).to(tl.int64)
            mask_m = offs_m[:, None] < stop
            mask_n = offs_n[None, :] < n
            a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
            b_ptrs = (
                b_ptr
                + member * stride_bg
                + offs_k[:, None] * stride_bk
                + offs_n[None, :] * stride_bn
            )
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k_block in range(0, tl.cdiv(k, BLOCK_K)):
                k_left = k - k_block * BLOCK_K
                a = tl.load(a_ptrs, mask=mask_m & (offs_k[None, :] < k_left), other=0.0)
                b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n, other=0.0)
                acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
                a_ptrs += BLOCK_K * stride_ak
                b_ptrs += BLOCK_K * stride_bk
            c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m & mask_n)

    return gemm_grouped
