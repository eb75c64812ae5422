"""The GEMV kernel as a jit function (its host side, and why it exists, is
:mod:`.gemv`).

It computes C (M x N) = A (M x K) @ W^T for a handful of rows M, reading
the weight as W (N x K): B's storage with its strides exchanged, so that a
transposed-view B (a row-major weight) has K contiguous. Program
(tile, split) takes ``BLOCK_N`` rows of W over one range of K blocks, loads
each block of them once, and multiplies it by every row of A on the CUDA
cores: no ``tl.dot``, so nothing of the tile is padding whatever M is, and
nothing waits on a tensor-core pipeline.

The products are kept, not summed, inside the loop: an fp32
``BLOCK_N x BLOCK_K`` accumulator for M = 1 (``ROWS``, M exactly, a
constexpr), ``BLOCK_M x BLOCK_N x BLOCK_K`` for more rows, added across K
once after the loop. Summing in every block instead put 300 to 650 warp
shuffles in the loop's sm_90 code (2 to 8 rows, Triton 3.7); this way it is
loads and fused multiply-adds alone (the dispatch keeps the accumulator
at 64 registers a thread, ``dispatch.GEMV_PRODUCTS``).

Cut K (``SPLIT_K`` > 1) is handed over as :mod:`.hand_over` does it:
fp32 partials in per-program slots, one acquire-release counter per tile,
the last program adds the slots in split order (the same bits whichever
arrives last) and puts the counter back to 0.

``W_K_UNIT`` / ``A_K_UNIT`` say that operand's K stride is 1: as a literal
the compiler loads K in 16-byte vectors (``cp.async`` into the stages that
``tl.range``'s ``num_stages`` asks for: a loop without ``tl.dot`` is
pipelined only where it asks).

Only the launcher imports this module (never the plugin's import), for the
reasons :mod:`.tile_parts` gives.
"""

import triton
import triton.language as tl
from gemmreg_plugins.triton_tuned.hand_over import leave_partial, sum_partials


@triton.jit
def gemv_split_k(a_ptr, w_ptr, c_ptr, ws_ptr, count_ptr, n, k, stride_am, stride_ak,
                 stride_wn, stride_wk, stride_cm, stride_cn, blocks_per_split,
                 ROWS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr, NUM_STAGES: tl.constexpr,
                 A_K_UNIT: tl.constexpr, W_K_UNIT: tl.constexpr, EVEN_K: tl.constexpr,
                 REVERSED: tl.constexpr = False):  # fmt: skip
    tile = tl.program_id(axis=0)
    split = tl.program_id(axis=1)
    if REVERSED:  # tests only: under the interpreter the first split then arrives last
        split = SPLIT_K - 1 - split
    offs_n = (tile * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    first = split * blocks_per_split
    blocks = tl.minimum(blocks_per_split, tl.cdiv(k, BLOCK_K) - first)
    kk = tl.arange(0, BLOCK_K)
    offs_k = first.to(tl.int64) * BLOCK_K + kk.to(tl.int64)
    if W_K_UNIT:
        w_ptrs = w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :]
        w_step = BLOCK_K
    else:
        w_ptrs = w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :] * stride_wk
        w_step = BLOCK_K * stride_wk.to(tl.int64)
    if A_K_UNIT:
        a_ptrs = a_ptr + offs_k
        a_step = BLOCK_K
    else:
        a_ptrs = a_ptr + offs_k * stride_ak
        a_step = BLOCK_K * stride_ak.to(tl.int64)
    mask_n = offs_n[:, None] < n
    cols = tl.arange(0, BLOCK_M)
    if ROWS == 1:
        products = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    else:
        products = tl.zeros((BLOCK_M, BLOCK_N, BLOCK_K), dtype=tl.float32)
    for i in tl.range(0, blocks, num_stages=NUM_STAGES):
        if EVEN_K:
            w = tl.load(w_ptrs, mask=mask_n, other=0.0)
        else:
            k_ok = kk < k - (first + i) * BLOCK_K
            w = tl.load(w_ptrs, mask=mask_n & k_ok[None, :], other=0.0)
        w = w.to(tl.float32)
        if ROWS == 1:
            if EVEN_K:
                x = tl.load(a_ptrs).to(tl.float32)
            else:
                x = tl.load(a_ptrs, mask=k_ok, other=0.0).to(tl.float32)
            products += w * x[None, :]
        else:
            x_ptrs = a_ptrs[None, :] + cols[:, None] * stride_am
            if EVEN_K:
                x = tl.load(x_ptrs, mask=cols[:, None] < ROWS, other=0.0)
            else:
                x = tl.load(x_ptrs, mask=(cols[:, None] < ROWS) & k_ok[None, :], other=0.0)
            products += w[None, :, :] * x.to(tl.float32)[:, None, :]
        w_ptrs += w_step
        a_ptrs += a_step
    # ROWS == 1: BLOCK_M is 1 too, and the sum is C's one row
    acc = tl.sum(products, axis=1)[None, :] if ROWS == 1 else tl.sum(products, axis=2)
    c_ptrs = c_ptr + cols[:, None] * stride_cm + offs_n[None, :] * stride_cn
    mask_c = (cols[:, None] < ROWS) & (offs_n[None, :] < n)
    if SPLIT_K == 1:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_c)
    else:
        at = cols[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
        if leave_partial(ws_ptr, count_ptr, tile, split, acc, at, SPLIT_K, BLOCK_M * BLOCK_N):
            total = sum_partials(ws_ptr, count_ptr, tile, at, SPLIT_K, BLOCK_M * BLOCK_N)
            tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty), mask=mask_c)
