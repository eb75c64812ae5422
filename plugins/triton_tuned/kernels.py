"""The two Triton GEMM kernels (their launchers are in :mod:`.launchers`).

``tiled``: the seed kernel's structure with every knob exposed: pointers with
strides (any layout, padded rows included), offsets in int64 before they meet
a stride, grouped tile order, masks on every axis of every load and store.

``persistent_tma``: grid = at most #SMs (``launchers.persistent_programs``),
each program loops over tiles ``pid, pid + PROGRAMS, ...`` in grouped order
(or, for a config with ``persistent=False``, one program per tile: on the
H200 neither form won on every shape); A, B and C move through TMA
tensor descriptors built on the host per launch. TMA zero-fills boxes that
cross the tensor's edge on load and clips them on store, so tails need no
masks. A transposed operand is described through its contiguous transpose and
the tile is transposed in the kernel. TMA needs the last stride 1, the other
strides multiples of 16 bytes and 16-byte-aligned bases: ``tma_refusal`` checks
that per launch, and the launcher falls back to the tiled path when it fails.
fp32 as TF32 may run as C^T = B^T A^T (``TF32_SWAP``, see ``tma_rules.tf32_swap``).
With ``STREAM_K`` (``Config.stream_k``) the tiles from ``dp_tiles`` on are
first shared out by K steps over every program, so every SM does the same
work (:mod:`.stream_k`); the rest go in whole rounds as before.

Kernels are built on first use (``functools.cache``), so importing the plugin
stays cheap and ``TRITON_INTERPRET`` is decided before triton is imported.
"""

from __future__ import annotations

import functools
from typing import Any

_tile_acc: Any = None
_tile_origin: Any = None
_store_tile: Any = None
_stream_k_tail: Any = None
"""The kernels' jitted parts (:mod:`.tile_parts`, the stream-K tail of
:mod:`.stream_k_tail`; the tiled kernel takes the tile order alone), set when
a kernel is built: module globals, because Triton's interpreter re-runs a
kernel's source without its closures."""


@functools.cache
def tiled_kernel() -> Any:
    import triton
    import triton.language as tl
    from gemmreg_plugins.triton_tuned import tile_parts

    global _tile_origin
    _tile_origin = tile_parts.tile_origin

    @triton.jit
    def gemm_tiled(
        a_ptr,
        b_ptr,
        c_ptr,
        m,
        n,
        k,
        stride_am,
        stride_ak,
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
        pid = tl.program_id(axis=0)
        tiles_m = tl.cdiv(m, BLOCK_M)
        tiles_per_group = GROUP_M * tl.cdiv(n, BLOCK_N)
        off_m, off_n = _tile_origin(pid, tiles_m, tiles_per_group, GROUP_M, BLOCK_M, BLOCK_N)

        offs_m = (off_m + tl.arange(0, BLOCK_M)).to(tl.int64)
        offs_n = (off_n + tl.arange(0, BLOCK_N)).to(tl.int64)
        offs_k = tl.arange(0, BLOCK_K).to(tl.int64)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        mask_m = offs_m[:, None] < m
        mask_n = offs_n[None, :] < n
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k_block in range(0, tl.cdiv(k, BLOCK_K)):
            k_left = k - k_block * BLOCK_K
            a = tl.load(a_ptrs, mask=mask_m & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n, other=0.0)
            acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
            # Advance in int64: BLOCK_K * stride is a 64-bit step on 64-bit pointers.
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m & mask_n)

    return gemm_tiled


@functools.cache
def persistent_tma_kernel() -> Any:
    import triton
    import triton.language as tl
    from gemmreg_plugins.triton_tuned import stream_k_tail, tile_parts

    global _tile_acc, _tile_origin, _store_tile, _stream_k_tail
    _tile_acc, _tile_origin = tile_parts.tile_acc, tile_parts.tile_origin
    _store_tile, _stream_k_tail = tile_parts.store_tile, stream_k_tail.stream_k_tail

    @triton.jit
    def gemm_persistent_tma(
        a_desc,
        b_desc,
        c_desc,
        ws_ptr,
        count_ptr,
        m,
        n,
        k,
        dp_tiles,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        BLOCK_K: tl.constexpr,
        GROUP_M: tl.constexpr,
        PROGRAMS: tl.constexpr,
        A_TRANSPOSED: tl.constexpr,
        B_TRANSPOSED: tl.constexpr,
        FLATTEN: tl.constexpr,
        WS: tl.constexpr,
        PERSISTENT: tl.constexpr,
        EPILOGUE_PARTS: tl.constexpr,
        INPUT_PRECISION: tl.constexpr,
        TF32_SWAP: tl.constexpr = False,
        STREAM_K: tl.constexpr = False,
        SK_REVERSED: tl.constexpr = False,
    ):
        pid = tl.program_id(axis=0)
        tiles_m = tl.cdiv(m, BLOCK_M)
        tiles_n = tl.cdiv(n, BLOCK_N)
        k_tiles = tl.cdiv(k, BLOCK_K)
        num_tiles = tiles_m * tiles_n
        tiles_per_group = GROUP_M * tiles_n
        # The epilogue recomputes its tile from its own counter, as Triton's
        # persistent tutorial does: with FLATTEN the compiler pipelines the
        # flattened loop, and nothing from the prologue needs to live that long.
        # One tile per program (not PERSISTENT) is the same body, a loop of one.
        step: tl.constexpr = PROGRAMS if PERSISTENT else 1
        end = num_tiles if PERSISTENT else pid + 1
        if STREAM_K:  # tiles from dp_tiles on are shared out by K steps first
            _stream_k_tail(a_desc, b_desc, c_desc, ws_ptr, count_ptr, pid, tiles_m,
                           tiles_per_group, k_tiles, num_tiles - dp_tiles, dp_tiles, BLOCK_M,
                           BLOCK_N, BLOCK_K, GROUP_M, PROGRAMS, A_TRANSPOSED, B_TRANSPOSED,
                           EPILOGUE_PARTS, INPUT_PRECISION, TF32_SWAP, SK_REVERSED)  # fmt: skip
            end = dp_tiles
        store_tile = pid - step
        for tile in tl.range(pid, end, step, flatten=FLATTEN, warp_specialize=WS):
            off_m, off_n = _tile_origin(tile, tiles_m, tiles_per_group, GROUP_M, BLOCK_M, BLOCK_N)
            acc = _tile_acc(a_desc, b_desc, off_m, off_n, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K,
                            A_TRANSPOSED, B_TRANSPOSED, TF32_SWAP, INPUT_PRECISION)  # fmt: skip
            store_tile += step
            store_m, store_n = _tile_origin(
                store_tile, tiles_m, tiles_per_group, GROUP_M, BLOCK_M, BLOCK_N
            )
            _store_tile(c_desc, acc, store_m, store_n, BLOCK_M, BLOCK_N, EPILOGUE_PARTS)

    return gemm_persistent_tma
