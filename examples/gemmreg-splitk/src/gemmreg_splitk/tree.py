"""Deterministic mode's tree reduction (``reduce=tree``): the K slices of a
tile sum up a fixed tree of fan-in ``FANIN``
(:mod:`gemmreg_splitk.kernel` says when and why).

Imported by :func:`gemmreg_splitk.kernel.splitk_kernel` only, after the host
has decided whether Triton runs interpreted (this module imports Triton).
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def tree_reduce(
    acc, ws_ptr, count_ptr, c_ptrs, at, mask, m, n, tile, split,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLIT_K: tl.constexpr,
    LEVELS: tl.constexpr, FANIN: tl.constexpr,
):  # fmt: skip
    """Sum a tile's K slices up a fixed tree of fan-in ``FANIN`` over the slice index.

    At level ``lvl`` a program holds the sum of the aligned run of
    ``span = FANIN**lvl`` slices that starts at ``first``. Its group is the
    ``FANIN`` runs of the enclosing aligned run of ``FANIN * span`` slices
    (from ``group_first``), cut at ``SPLIT_K``: ``members`` runs. Each
    member writes its sum into the slot of its run's first slice and counts
    itself in on the group's counter; the last to arrive reads the members'
    slots and sums them left to right (member 0, 1, ...), so the bits do
    not depend on who arrives last, and goes up a level; the others stop.
    A group of one run (the tail past ``SPLIT_K``) goes up unchanged.

    The counter sits at ``group_first + span`` (the second member's first
    slice, below ``SPLIT_K`` wherever a group has two members): written in
    base ``FANIN`` its lowest non-zero digit is a 1 at position ``lvl``, so
    no two (level, group) pairs share one, within the ``SPLIT_K`` counters
    of the tile. With ``FANIN = 2`` this is the binary tree (the pair's
    midpoint; ``s0 + s1`` is the binary's own + sibling, as IEEE addition
    commutes). So no program waits on more than ``LEVELS = ceil(log_FANIN
    SPLIT_K)`` hand-overs, nor reads more than ``FANIN - 1`` slots per level.
    """
    total = acc
    alive = True
    for lvl in tl.static_range(LEVELS):
        if alive:
            span = FANIN**lvl
            first = (split // span) * span
            group_first = (split // (span * FANIN)) * (span * FANIN)
            members = tl.minimum((SPLIT_K - group_first + span - 1) // span, FANIN)
            if members > 1:
                tl.debug_barrier()  # this level's reads are done before the slot is reused
                tl.store(ws_ptr + first.to(tl.int64) * m * n + at, total, mask=mask)
                tl.debug_barrier()  # every thread's sum is out before the count says so
                node = count_ptr + tile * SPLIT_K + group_first + span
                arrived = tl.atomic_add(node, 1, sem="acq_rel")
                if arrived < members - 1:
                    alive = False
                else:
                    tl.debug_barrier()
                    # member 0 first, then 1, 2, ...: a fixed order. The own
                    # run's sum is taken from registers; its slot is read too
                    # (the same bits), as a mask made from a scalar condition
                    # fails in Triton 3.9's interpreter ("mask has unsupported
                    # dtype").
                    summed = tl.where(
                        first == group_first,
                        total,
                        tl.load(
                            ws_ptr + group_first.to(tl.int64) * m * n + at,
                            mask=mask,
                            other=0.0,
                            cache_modifier=".cg",
                        ),
                    )
                    for j in tl.static_range(1, FANIN):
                        slot = group_first + j * span
                        if j < members:
                            part = tl.where(
                                first == slot,
                                total,
                                tl.load(
                                    ws_ptr + slot.to(tl.int64) * m * n + at,
                                    mask=mask,
                                    other=0.0,
                                    cache_modifier=".cg",
                                ),
                            )
                            summed = summed + part
                    total = summed
                    tl.atomic_xchg(node, 0, sem="relaxed")
    if alive:
        tl.store(c_ptrs, total.to(c_ptrs.dtype.element_ty), mask=mask)
