"""Deterministic mode's reduce-scatter (``reduce=scatter``): every program of
a tile sums one share of it.

Why: the serial and tree reductions put the whole tile's sum on one program
at the end (the last to arrive reads every slot, or ``FANIN - 1`` slots per
level, one level after another). At 16x16x65536 on the H200 that cost
deterministic mode 2.7 µs of 12.8 against atomic mode at the same split
(evidence/2026-12-01-h200-split-k-flat-shapes/c1/tune-small.log). Here the tile's
``SPLIT_K`` programs, all done with their main loops, each sum
``PER`` elements of the tile over every slot, so the reduction after the last
arrival is one round of loads, spread over the tile's programs.

That needs every program of the tile to wait until all have written their
partials: a spin on the tile's arrival count, which only ever grows (64-bit),
so each call's programs wait for the next multiple of ``SPLIT_K`` and nobody
has to reset it while others may still be reading it (an earlier form had the
last program bump a separate word: one more hand-over, 0.5-1 µs a call on the
H200). A spin can only end if the programs it waits for are running, so the
kernel spins (``SPIN``) only when the whole grid fits on the GPU at once, and
is then launched cooperatively (``launch_cooperative_grid``): the driver runs
every program at once, or refuses the launch, instead of leaving a program
waiting for one that never gets a multiprocessor. Everywhere else (a grid larger than the SM count, an
unknown SM count, Triton's interpreter, which runs programs one at a time),
the last program to arrive sums every share itself, through the same
function: the same bits, only slower.

The sum of each element is always taken by the same share function at the
same lane, over the slots in one fixed ``tl.sum``: bit-identical whoever
arrives last and whether the kernel spins or not. Its bits may differ from
the serial and tree orders' (under the interpreter, where every ``tl.sum``
is numpy's, they agree).

Imported by :func:`gemmreg_splitk.kernel.splitk_kernel` only, after the host
has decided whether Triton runs interpreted (this module imports Triton).
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemmreg_splitk import tuned


def share_size(block_m: int, block_n: int, split_k: int) -> int:
    """Elements per share: the tile over ``split_k`` programs, rounded up to a
    power of two (``tl.arange``'s lengths), so the shares cover the tile."""
    return tuned.pow2_ceil(-(-block_m * block_n // split_k))


def slots(split_k: int) -> int:
    """The slot axis loaded at once: ``split_k`` rounded up to a power of two."""
    return tuned.pow2_ceil(split_k)


@triton.jit
def share_sum(
    ws_ptr, c_ptr, m, n, stride_cm, stride_cn, tile, grid_n, share,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLIT_K: tl.constexpr,
    SLOTS: tl.constexpr, PER: tl.constexpr,
):  # fmt: skip
    """Sum elements ``share * PER`` onwards of the tile (row-major in it) over
    its ``SPLIT_K`` slots, slot 0 upwards in one ``tl.sum``, and write them to C."""
    idx = share * PER + tl.arange(0, PER)
    rows = ((tile // grid_n) * BLOCK_M + idx // BLOCK_N).to(tl.int64)
    cols = ((tile % grid_n) * BLOCK_N + idx % BLOCK_N).to(tl.int64)
    ok = (idx < BLOCK_M * BLOCK_N) & (rows < m) & (cols < n)
    at = rows * n + cols
    s = tl.arange(0, SLOTS).to(tl.int64)
    parts = tl.load(
        ws_ptr + (s * m * n)[:, None] + at[None, :],
        mask=(s < SPLIT_K)[:, None] & ok[None, :],
        other=0.0,
        cache_modifier=".cg",
    )
    total = tl.sum(parts, axis=0)
    tl.store(c_ptr + rows * stride_cm + cols * stride_cn, total.to(c_ptr.dtype.element_ty), mask=ok)
