"""The split-K hand-over, as jit functions every kernel that cuts K shares.

When K is cut into ranges, each range of a tile is one program's partial
product, and one program must add them and store C. The programs hand over
through memory, so no program waits for another:

- :func:`leave_partial`: the program writes its fp32 partial to its own slot of
  a workspace (``SPLIT_K`` slots a tile), then counts itself in with an
  acquire-release add on the tile's counter. Every thread's stores are out
  (a barrier) before the count says so. It answers whether this program is
  the last of the tile's to arrive.
- :func:`sum_partials`: the last one (after a barrier, so that the one
  thread's acquire comes before every thread's load) adds the slots in split
  order, not in arrival order, so C is the same bits whichever program
  arrives last; and it puts the counter back to 0 for the next call, which
  the stream orders after this one.

Written once, so the split-K kernels (:mod:`.split_k_kernel`, the GEMV of
:mod:`.gemv_kernel`, the TMA split-K of :mod:`.tma_split_k_kernel`, the fp8
TMA kernel of :mod:`.fp8_tma_kernel`) and the stream-K tail (which hands a
cut tile over in two pieces, :mod:`.stream_k_tail`) cannot drift apart. The
TMA stream-K kernel (:mod:`.tma_stream_k_kernel`) cuts a tile into a number
of pieces known only at run time, which :func:`leave_piece` and
:func:`sum_pieces` take; :func:`leave_partial` and :func:`sum_partials` are
them with every slot a range's (a constant count, folded: the split-K
kernels compile to the same instructions as when the two were written
apart).
Triton inlines them, so the compiled kernel is what the body written in place
gives. Only kernel modules import this one, for the reasons :mod:`.tile_parts`
gives.
"""

import triton
import triton.language as tl


@triton.jit
def leave_partial(ws_ptr, count_ptr, tile, split, acc, at, SPLIT_K: tl.constexpr,
                  SLOT: tl.constexpr):  # fmt: skip
    """Write ``acc`` (fp32) to slot ``split`` of ``tile``'s ``SPLIT_K`` slots of
    ``SLOT`` elements, at offsets ``at`` in the slot, and count it in.
    True for the program that arrives last (:func:`leave_piece`, every
    slot a range's)."""
    return leave_piece(ws_ptr, count_ptr, tile, split, acc, at, SPLIT_K, SPLIT_K, SLOT)


@triton.jit
def sum_partials(ws_ptr, count_ptr, tile, at, SPLIT_K: tl.constexpr, SLOT: tl.constexpr):
    """The sum of ``tile``'s slots in split order, for the program that
    arrived last; the tile's counter goes back to 0 for the next call
    (:func:`sum_pieces`, every slot a range's)."""
    return sum_pieces(ws_ptr, count_ptr, tile, at, SPLIT_K, SPLIT_K, SLOT)


@triton.jit
def leave_piece(ws_ptr, count_ptr, tile, piece, acc, at, pieces, SLOTS: tl.constexpr,
                SLOT: tl.constexpr):  # fmt: skip
    """Write ``acc`` (fp32) to slot ``piece`` of ``tile``'s ``SLOTS`` slots of
    ``SLOT`` elements, at offsets ``at`` in the slot, and count it in. True
    for the last of the tile's ``pieces`` to arrive (a count the stream-K
    kernel knows only at run time; a constant where every slot is used).

    A slot's offsets fit 32 bits (a tile is at most 2^16 elements); the
    tile's slots start at a 64-bit offset."""
    slots = ws_ptr + tile.to(tl.int64) * (SLOTS * SLOT)
    tl.store(slots + piece * SLOT + at, acc)
    tl.debug_barrier()  # every thread's piece is out before the count says so
    arrived = tl.atomic_add(count_ptr + tile, 1, sem="acq_rel")
    return arrived == pieces - 1


@triton.jit
def sum_pieces(ws_ptr, count_ptr, tile, at, pieces, SLOTS: tl.constexpr, SLOT: tl.constexpr):
    """The sum of ``tile``'s first ``pieces`` slots in piece order, for the
    program that arrived last; the tile's counter goes back to 0 for the
    next call."""
    tl.debug_barrier()  # the acquire (one thread's) before every load
    slots = ws_ptr + tile.to(tl.int64) * (SLOTS * SLOT)
    total = tl.load(slots + at, cache_modifier=".cg")
    for s in range(1, pieces):
        total += tl.load(slots + s * SLOT + at, cache_modifier=".cg")
    tl.atomic_xchg(count_ptr + tile, 0, sem="relaxed")  # clean for the next call
    return total
