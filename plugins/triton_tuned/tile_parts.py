"""The jitted pieces of the persistent TMA kernel's body, shared by its rounds
(:mod:`.kernels`) and its stream-K tail (:mod:`.stream_k_tail`): a tile's
product over a range of K steps, a tile's origin in grouped order (which the
Gluon kernels and the pointer kernels of :mod:`.kernels`, :mod:`.fp8_kernel`
and :mod:`.grouped_kernel` call too), and the epilogue's TMA store of C (the
product and the store are the grouped TMA kernel's too,
:mod:`.grouped_tma_kernel`, with :func:`member_rows` for its descriptors).
Written once, so the paths cannot drift apart; Triton inlines them, so the
compiled kernel is what one body written in place gives.

Only the kernel builders import this module (never the plugin's import): it
imports Triton at its top, which must come after the host has decided whether
Triton runs interpreted, and which the interpreter needs (it looks for
``triton.language`` among a jit function's module globals).
"""

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
def member_rows(ptr, first, rows, cols, stride, BLOCK_M: tl.constexpr,
                BLOCK_W: tl.constexpr):  # fmt: skip
    """A device-made descriptor of ``rows`` rows from row ``first`` of a
    row-major matrix ``cols`` wide, in BLOCK_M x BLOCK_W boxes: TMA clips a
    box at the last of those rows, so a grouped member's tile never reads or
    writes the next member's."""
    return tl.make_tensor_descriptor(
        ptr + first * stride, shape=[rows, cols], strides=[stride, 1],
        block_shape=[BLOCK_M, BLOCK_W],
    )  # fmt: skip


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
