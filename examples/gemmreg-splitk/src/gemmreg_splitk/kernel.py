"""The Triton kernel: split-K in one launch, the last program of a tile reduces it.

Why one launch: on skinny problems the work is a few microseconds, so each
extra launch (zeroing a buffer, a separate reduction kernel, a cast back)
costs as much as the GEMM itself. Here every program computes the fp32
partial of one output tile over one slice of K, hands it over (its own slot
of a workspace in deterministic mode, an ``atomic_add`` into one fp32
accumulator in atomic mode), then counts itself in on the tile's arrival
counter. The program that arrives last reduces the tile, casts it to C's
dtype, writes C, and puts back what it used: the counter to 0 and, in atomic
mode, the accumulator tile to 0. The cached buffers are then clean for the
next call, with no memset launch. This is CUTLASS's serial split-K ("the last
CTA reduces"). Nobody waits for anybody: no spin loop (Triton's interpreter
runs programs one at a time, where a spin-wait would never end), except in
the reduce-scatter below, and there only where the launch guarantees it ends.

Deterministic mode sums the ``SPLIT_K`` partials of a tile from the workspace
in a fixed order (chunks of ``REDUCE_CHUNK`` slots, 0 upwards, each chunk a
fixed tree), never in arrival order: the result is bit-identical whichever
program arrives last. Atomic mode adds in L2 as partials arrive: one pass
fewer, but the last bits can change between runs.

``TMA`` (``tma=1`` in the config, Hopper and TMA-able strides only) loads
A and B through tensor descriptors instead of pointers: :mod:`gemmreg_splitk.tma`
says why and when. Everything after the main loop is the same code.

``TREE`` (deterministic mode, ``reduce=tree`` in the config) replaces the
serial reduction by a fixed tree of fan-in ``FANIN`` (``fanin=``, a power of
two, 2 by default) over the slice index: the slices group by ``FANIN``, the
last of each group to arrive sums the group's sums in a fixed order and goes
up a level, so a tile's reduction is ``LEVELS = ceil(log_FANIN(SPLIT_K))``
hand-overs of at most ``FANIN - 1`` partial reads each (the serial reduction
has one program read all ``SPLIT_K``, on the tile's critical path; the binary
tree at split 32 makes 5 sequential atomic hand-overs, fan-in 8 makes 2). The
tree's shape never changes, so its result is bit-identical whoever arrives
last; it differs in the last bits from the serial order's, and between
fan-ins. It counts arrivals per tree node (``tiles x SPLIT_K`` counters) and
costs one more partial write per node.

``SCATTER`` (deterministic mode, ``reduce=scatter``) spreads the tile's sum
over its ``SPLIT_K`` programs instead: each sums ``PER`` of its elements over
all ``SLOTS``, once every partial is in. With ``SPIN`` the programs wait for
that on the tile's arrival count (64-bit, never reset: a call's programs
wait for the next multiple of ``SPLIT_K``), which needs
every program resident at once (a cooperative launch of at most one program
per SM); without it the last to arrive sums every share itself, the same
bits. :mod:`gemmreg_splitk.scatter` says why.

Memory ordering: every thread's partial is issued, then a CTA barrier, then
the counter's ``atomic_add`` with acquire-release semantics at GPU scope, so
a program that sees the count complete also sees every partial; it reads
the workspace's slots back with ``.cg`` loads (from L2, never a stale L1
line), and atomic mode's accumulator with an atomic exchange that also
zeroes it (plain loads of it came back short on the H200).
"""

from __future__ import annotations

import functools
from typing import Any

INPUT_PRECISION = "ieee"
"""fp32 inputs are multiplied in IEEE fp32, never silently as TF32."""


_tree_reduce: Any = None
"""The jitted tree reduction the kernel calls (:mod:`gemmreg_splitk.tree`), set
when the kernel is built."""
_share_sum: Any = None
"""The reduce-scatter's share (:mod:`gemmreg_splitk.scatter`), likewise."""
_tma_partial: Any = None
"""The TMA path's jitted main loop, set likewise."""


@functools.cache
def splitk_kernel() -> Any:
    """Build the @triton.jit kernel on first use, after the host process has
    decided whether Triton runs interpreted."""
    import triton
    import triton.language as tl

    # module globals: the interpreter re-runs the source without closures
    global _tree_reduce, _share_sum, _tma_partial
    from gemmreg_splitk import scatter, tree

    _tree_reduce, _share_sum = tree.tree_reduce, scatter.share_sum
    _tma_partial = _tma_partial_fn()

    @triton.jit
    def splitk(
        a_ptr, b_ptr, c_ptr, ws_ptr, count_ptr,
        m, n, k, k_per_split,
        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
        SPLIT_K: tl.constexpr, ATOMIC: tl.constexpr, EVEN_K: tl.constexpr,
        REDUCE_CHUNK: tl.constexpr, REVERSE_SPLITS: tl.constexpr, PRECISION: tl.constexpr,
        TREE: tl.constexpr = False, LEVELS: tl.constexpr = 0, FANIN: tl.constexpr = 2,
        TMA: tl.constexpr = False, A_T: tl.constexpr = False, B_T: tl.constexpr = False,
        SCATTER: tl.constexpr = False, SPIN: tl.constexpr = False,
        SLOTS: tl.constexpr = 1, PER: tl.constexpr = 1,
    ):  # fmt: skip
        # Programs of one K slice are neighbours, so they share A and B in L2.
        pid = tl.program_id(0)
        grid_n = tl.cdiv(n, BLOCK_N)
        tiles = tl.cdiv(m, BLOCK_M) * grid_n
        tile = pid % tiles
        split = pid // tiles
        if REVERSE_SPLITS:  # tests only: the interpreter then runs the slices last to first
            split = SPLIT_K - 1 - split
        offs_m = ((tile // grid_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
        offs_n = ((tile % grid_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
        m_ok = offs_m[:, None] < m
        n_ok = offs_n[None, :] < n
        if TMA:  # a_ptr and b_ptr are tensor descriptors (gemmreg_splitk.tma): no masks
            k_start = split * k_per_split
            k_len = k_per_split
            if not EVEN_K:  # the last slice stops at K
                k_len = tl.minimum(k_per_split, k - k_start)
            acc = _tma_partial(a_ptr, b_ptr, (tile // grid_n) * BLOCK_M, (tile % grid_n) * BLOCK_N,
                               k_start, k_len, BLOCK_M, BLOCK_N, BLOCK_K, A_T, B_T, PRECISION)  # fmt: skip
        else:
            offs_k = split.to(tl.int64) * k_per_split + tl.arange(0, BLOCK_K).to(tl.int64)
            a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
            b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, k_per_split, BLOCK_K):
                if EVEN_K:
                    a = tl.load(a_ptrs, mask=m_ok, other=0.0)
                    b = tl.load(b_ptrs, mask=n_ok, other=0.0)
                else:
                    k_ok = (offs_k + kk) < k
                    a = tl.load(a_ptrs, mask=m_ok & k_ok[None, :], other=0.0)
                    b = tl.load(b_ptrs, mask=k_ok[:, None] & n_ok, other=0.0)
                acc += tl.dot(a, b, input_precision=PRECISION)
                a_ptrs += BLOCK_K * stride_ak
                b_ptrs += BLOCK_K * stride_bk
        mask = m_ok & n_ok
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        if SPLIT_K == 1:
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)
        else:
            at = offs_m[:, None] * n + offs_n[None, :]  # [M, N] row-major in the fp32 buffers
            if TREE and not ATOMIC:
                _tree_reduce(acc, ws_ptr, count_ptr, c_ptrs, at, mask, m, n, tile, split,
                             BLOCK_M, BLOCK_N, SPLIT_K, LEVELS, FANIN)  # fmt: skip
            elif SCATTER and not ATOMIC:
                tl.store(ws_ptr + split.to(tl.int64) * m * n + at, acc, mask=mask)
                tl.debug_barrier()
                # the count only grows: this call's arrivals end at the next multiple
                arrived = tl.atomic_add(count_ptr + tile, 1, sem="acq_rel")
                last = arrived % SPLIT_K == SPLIT_K - 1
                if SPIN:  # every program sums its own share once all have arrived
                    if not last:
                        target = arrived - arrived % SPLIT_K + SPLIT_K
                        now = tl.atomic_add(count_ptr + tile, 0, sem="acquire")
                        while now < target:
                            now = tl.atomic_add(count_ptr + tile, 0, sem="acquire")
                    tl.debug_barrier()  # the acquire (one thread's) before every thread's loads
                    _share_sum(ws_ptr, c_ptr, m, n, stride_cm, stride_cn, tile, grid_n, split,
                               BLOCK_M, BLOCK_N, SPLIT_K, SLOTS, PER)  # fmt: skip
                elif last:  # the last sums every share, in turn
                    tl.debug_barrier()
                    for each in range(0, SPLIT_K):
                        _share_sum(ws_ptr, c_ptr, m, n, stride_cm, stride_cn, tile, grid_n, each,
                                   BLOCK_M, BLOCK_N, SPLIT_K, SLOTS, PER)  # fmt: skip
            else:
                if ATOMIC:
                    tl.atomic_add(ws_ptr + at, acc, mask=mask, sem="relaxed")
                else:
                    tl.store(ws_ptr + split.to(tl.int64) * m * n + at, acc, mask=mask)
                tl.debug_barrier()  # every thread's partial is out before the count says so
                arrived = tl.atomic_add(count_ptr + tile, 1, sem="acq_rel")
                if arrived == SPLIT_K - 1:  # the last of the tile: reduce, write C, clean up
                    tl.debug_barrier()
                    if ATOMIC:
                        # Read the sum and zero it in one atomic exchange, not a load
                        # then a store: on the H200 plain (.cg) loads after the count
                        # missed some of the reductions (wrong C in 40 of 40 calls at
                        # 64x4096x16384, found by gemmreg's precheck), and release on the
                        # reductions did not help; an atomic on the same address is
                        # ordered after every reduction into it.
                        # As 32-bit integers (the same bits): Triton's interpreter
                        # exchanges no floats, and one code path runs everywhere.
                        bits = ws_ptr.to(tl.pointer_type(tl.int32)) + at
                        zero = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
                        total = tl.atomic_xchg(bits, zero, mask=mask, sem="relaxed")
                        total = total.to(tl.float32, bitcast=True)
                    else:
                        total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
                        slots = tl.arange(0, REDUCE_CHUNK).to(tl.int64)
                        for first in range(0, SPLIT_K, REDUCE_CHUNK):  # a fixed order, 0 upwards
                            s = first + slots
                            parts = tl.load(
                                ws_ptr + (s * m * n)[:, None, None] + at[None, :, :],
                                mask=(s < SPLIT_K)[:, None, None] & mask[None, :, :],
                                other=0.0,
                                cache_modifier=".cg",
                            )
                            total += tl.sum(parts, axis=0)
                    tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty), mask=mask)
                    tl.atomic_xchg(count_ptr + tile, 0, sem="relaxed")

    return splitk


@functools.cache
def _tma_partial_fn() -> Any:
    """The TMA path's main loop (:mod:`gemmreg_splitk.tma` says why). Built
    here, not in ``tma``, which the plugin imports before the host has decided
    whether Triton runs interpreted (``tree`` and ``scatter`` import Triton at
    their top, so only ``splitk_kernel`` imports them)."""
    import triton
    import triton.language as tl

    @triton.jit
    def tma_partial(
        a_desc, b_desc, off_m, off_n, k_start, k_len,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
        A_T: tl.constexpr, B_T: tl.constexpr, PRECISION: tl.constexpr,
    ):  # fmt: skip
        """The fp32 partial of one tile over ``k_len`` elements of K from
        ``k_start``: one TMA box of A and one of B per step, zero-filled past
        the tensors' edges; Triton pipelines the loop (``num_stages``) with
        mbarriers instead of ``cp.async`` groups."""
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(0, k_len, BLOCK_K):
            off_k = k_start + kk
            if A_T:  # noqa: SIM108 (a constexpr branch, as the compiler sees it)
                a = a_desc.load([off_k, off_m]).T  # described as A^T, K x M
            else:
                a = a_desc.load([off_m, off_k])
            if B_T:  # noqa: SIM108
                b = b_desc.load([off_n, off_k]).T  # described as B^T, N x K
            else:
                b = b_desc.load([off_k, off_n])
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
        return acc

    return tma_partial
