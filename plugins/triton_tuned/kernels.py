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


@functools.cache
def tiled_kernel() -> Any:
    import triton
    import triton.language as tl

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
        tiles_n = tl.cdiv(n, BLOCK_N)
        tiles_per_group = GROUP_M * tiles_n
        first_m = (pid // tiles_per_group) * GROUP_M
        group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
        tile_m = first_m + (pid % tiles_per_group) % group_rows
        tile_n = (pid % tiles_per_group) // group_rows

        offs_m = (tile_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
        offs_n = (tile_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
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


_tile_acc: Any = None
_tile_origin: Any = None
_store_tile: Any = None
_stream_k_tail: Any = None
"""The persistent kernel's jitted parts, set when it is built: module globals,
because Triton's interpreter re-runs a kernel's source without its closures."""


@functools.cache
def persistent_tma_kernel() -> Any:
    import triton
    import triton.language as tl

    global _tile_acc, _tile_origin, _store_tile, _stream_k_tail
    _tile_acc, _tile_origin, _store_tile = _tile_parts()
    _stream_k_tail = _stream_k_fn()

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


@functools.cache
def _tile_parts() -> tuple[Any, Any, Any]:
    """A tile's product over a range of K, its origin, and the epilogue: the
    persistent loop's body, shared with the stream-K tail so the two cannot
    drift apart."""
    import triton
    import triton.language as tl

    @triton.jit
    def tile_acc(a_desc, b_desc, off_m, off_n, k_first, k_end, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, A_TRANSPOSED: tl.constexpr,
                 B_TRANSPOSED: tl.constexpr, TF32_SWAP: tl.constexpr,
                 INPUT_PRECISION: tl.constexpr):  # fmt: skip
        """The fp32 product of the tile at (off_m, off_n) over K steps
        ``k_first`` to ``k_end``, as a BLOCK_M x BLOCK_N tile."""
        if TF32_SWAP:
            acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)  # C^T
        else:
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(k_first, k_end):
            off_k = kk * BLOCK_K
            if A_TRANSPOSED:  # noqa: SIM108 (a constexpr branch, as the compiler sees it)
                a = a_desc.load([off_k, off_m]).T  # A^T is K x M, contiguous
            else:
                a = a_desc.load([off_m, off_k])
            if B_TRANSPOSED:  # noqa: SIM108
                b = b_desc.load([off_n, off_k]).T  # B^T is N x K, contiguous
            else:
                b = b_desc.load([off_k, off_n])
            if TF32_SWAP:
                # C^T = B^T A^T with B^T from registers: see ``tf32_swap``.
                bits = b.to(tl.uint32, bitcast=True) & 0xFFFFE000  # TF32: 10 mantissa bits
                b_t = bits.to(tl.float32, bitcast=True).T
                acc = tl.dot(b_t, a.T, acc, input_precision=INPUT_PRECISION)
            else:
                acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        if TF32_SWAP:
            acc = acc.T
        return acc

    @triton.jit
    def tile_origin(tile, tiles_m, tiles_per_group, GROUP_M: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
        """Grouped order: ``GROUP_M`` tile rows walk down one column of B."""
        first_m = (tile // tiles_per_group) * GROUP_M
        group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
        off_m = (first_m + (tile % tiles_per_group) % group_rows) * BLOCK_M
        off_n = ((tile % tiles_per_group) // group_rows) * BLOCK_N
        return off_m, off_n

    @triton.jit
    def store_tile(c_desc, acc, store_m, store_n, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, EPILOGUE_PARTS: tl.constexpr):  # fmt: skip
        if EPILOGUE_PARTS == 1:
            c_desc.store([store_m, store_n], acc.to(c_desc.dtype))
        else:
            # Stores of half (or quarter) width: the epilogue's staging buffer
            # shrinks with them, which leaves shared memory for one more stage.
            half: tl.constexpr = BLOCK_N // 2
            left, right = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, half)), (0, 2, 1)))
            if EPILOGUE_PARTS == 2:
                c_desc.store([store_m, store_n], left.to(c_desc.dtype))
                c_desc.store([store_m, store_n + half], right.to(c_desc.dtype))
            else:
                quarter: tl.constexpr = BLOCK_N // 4
                q0, q1 = tl.split(tl.permute(tl.reshape(left, (BLOCK_M, 2, quarter)), (0, 2, 1)))
                q2, q3 = tl.split(tl.permute(tl.reshape(right, (BLOCK_M, 2, quarter)), (0, 2, 1)))
                c_desc.store([store_m, store_n], q0.to(c_desc.dtype))
                c_desc.store([store_m, store_n + quarter], q1.to(c_desc.dtype))
                c_desc.store([store_m, store_n + half], q2.to(c_desc.dtype))
                c_desc.store([store_m, store_n + half + quarter], q3.to(c_desc.dtype))

    return tile_acc, tile_origin, store_tile


@functools.cache
def _stream_k_fn() -> Any:
    """The stream-K tail (:mod:`.stream_k` says why and how it is split)."""
    import triton
    import triton.language as tl

    @triton.jit
    def stream_k_tail(a_desc, b_desc, c_desc, ws_ptr, count_ptr, pid, tiles_m,
                      tiles_per_group, k_tiles, tail_tiles, dp_tiles, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, PROGRAMS: tl.constexpr,
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
                off_m, off_n = _tile_origin((dp_tiles + t).to(tl.int32), tiles_m,
                                            tiles_per_group, GROUP_M, BLOCK_M, BLOCK_N)  # fmt: skip
                acc = _tile_acc(a_desc, b_desc, off_m, off_n, (lo - t * k_tiles).to(tl.int32),
                                (hi - t * k_tiles).to(tl.int32), BLOCK_M, BLOCK_N, BLOCK_K,
                                A_TRANSPOSED, B_TRANSPOSED, TF32_SWAP, INPUT_PRECISION)  # fmt: skip
                if hi - lo == k_tiles:
                    _store_tile(c_desc, acc, off_m, off_n, BLOCK_M, BLOCK_N, EPILOGUE_PARTS)
                else:
                    # Slot 0 holds the piece with the tile's first K step. The sum of
                    # two pieces is the same whichever adds (a + b == b + a exactly),
                    # so C is the same bits whoever arrives second.
                    piece = (lo != t * k_tiles).to(tl.int64)
                    slots = ws_ptr + t * (2 * BLOCK_M * BLOCK_N)
                    tl.store(slots + piece * (BLOCK_M * BLOCK_N) + at, acc)
                    tl.debug_barrier()  # every thread's piece is out before the count says so
                    arrived = tl.atomic_add(count_ptr + t, 1, sem="acq_rel")
                    if arrived == 1:
                        tl.debug_barrier()  # the acquire (one thread's) before every load
                        other = tl.load(slots + (1 - piece) * (BLOCK_M * BLOCK_N) + at,
                                        cache_modifier=".cg")  # fmt: skip
                        total_acc = acc + other
                        _store_tile(c_desc, total_acc, off_m, off_n, BLOCK_M, BLOCK_N,
                                    EPILOGUE_PARTS)  # fmt: skip
                        tl.atomic_xchg(count_ptr + t, 0, sem="relaxed")  # clean for the next call

    return stream_k_tail
