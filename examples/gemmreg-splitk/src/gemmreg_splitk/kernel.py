"""The Triton kernels: fp32 partial products per K slice, then a reduction.

Deterministic mode (the default) writes each split's partial tile to its own
slot of a workspace and sums the slots in a fixed order, so the result is
bit-identical from run to run. Atomic mode adds the partials into one fp32
buffer with ``tl.atomic_add``: one pass fewer over memory, but the order of the
additions (and so the last bits) can change between runs.
"""

from __future__ import annotations

import functools
from typing import Any

REDUCE_BLOCK = 256
INPUT_PRECISION = "ieee"
"""fp32 inputs are multiplied in IEEE fp32, never silently as TF32."""


@functools.cache
def kernels() -> tuple[Any, Any]:
    """Build the @triton.jit kernels on first use, after the host process has
    decided whether Triton runs interpreted."""
    import triton
    import triton.language as tl

    @triton.jit
    def partial_kernel(
        a_ptr,
        b_ptr,
        ws_ptr,
        m,
        n,
        k,
        k_per_split,
        stride_am,
        stride_ak,
        stride_bk,
        stride_bn,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        BLOCK_K: tl.constexpr,
        ATOMIC: tl.constexpr,
        PRECISION: tl.constexpr,
    ):
        pid_mn = tl.program_id(0)
        pid_k = tl.program_id(1)
        grid_n = tl.cdiv(n, BLOCK_N)
        offs_m = ((pid_mn // grid_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
        offs_n = ((pid_mn % grid_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
        k_start = pid_k.to(tl.int64) * k_per_split
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(0, k_per_split, BLOCK_K):
            offs_k = k_start + kk + tl.arange(0, BLOCK_K).to(tl.int64)
            a = tl.load(
                a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                mask=(offs_m[:, None] < m) & (offs_k[None, :] < k),
                other=0.0,
            )
            b = tl.load(
                b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                mask=(offs_k[:, None] < k) & (offs_n[None, :] < n),
                other=0.0,
            )
            acc += tl.dot(a, b, input_precision=PRECISION)
        mask = (offs_m[:, None] < m) & (offs_n[None, :] < n)
        tile = offs_m[:, None] * n + offs_n[None, :]
        if ATOMIC:
            tl.atomic_add(ws_ptr + tile, acc, mask=mask)
        else:
            tl.store(ws_ptr + pid_k.to(tl.int64) * m * n + tile, acc, mask=mask)

    @triton.jit
    def reduce_kernel(
        ws_ptr,
        c_ptr,
        m,
        n,
        split_k,
        stride_cm,
        stride_cn,
        BLOCK: tl.constexpr,
    ):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
        mask = offs < m * n
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for s in range(0, split_k):  # a fixed order: the sum is the same every run
            acc += tl.load(ws_ptr + s * m * n + offs, mask=mask, other=0.0)
        row = offs // n
        col = offs % n
        tl.store(
            c_ptr + row * stride_cm + col * stride_cn, acc.to(c_ptr.dtype.element_ty), mask=mask
        )

    return partial_kernel, reduce_kernel
