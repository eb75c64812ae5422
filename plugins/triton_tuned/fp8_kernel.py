"""The fp8 GEMM kernel: C = (scale_a * A) @ (B * scale_b), A and B fp8
(e4m3), the sums in fp32, C in bf16, fp16 or fp32; its host side is
:mod:`.fp8`.

The scales come after the sums: a per-tensor pair is one product, rowwise
scales a column of ``BLOCK_M`` scales of A and a row of ``BLOCK_N`` of B,
multiplied into the fp32 tile before it is rounded to C's dtype once, as
``torch._scaled_mm`` defines them.

Hopper's fp8 ``wgmma`` keeps about 13 bits of a running sum; cuBLASLt
without fast accumulation promotes partial sums into fp32 as they grow.
So does this kernel: ``tl.dot(..., max_num_imprecise_acc=PROMOTE_EVERY)``
adds each run of ``PROMOTE_EVERY`` K elements into a full fp32 accumulator
(Triton's default on sm_90 never promotes, the error then growing with K).

Generic strides (any layout), offsets in int64, masks on every axis, grouped
tile order; built on first use as the other kernels are.
"""

from __future__ import annotations

import functools
from typing import Any

_tile_origin: Any = None
"""The grouped tile order (:func:`.tile_parts.tile_origin`), set when the
kernel is built: a module global, because Triton's interpreter re-runs a
kernel's source without its closures."""


@functools.cache
def fp8_kernel() -> Any:
    import triton
    import triton.language as tl
    from gemmreg_plugins.triton_tuned import tile_parts

    global _tile_origin
    _tile_origin = tile_parts.tile_origin

    @triton.jit
    def gemm_fp8(
        a_ptr,
        b_ptr,
        c_ptr,
        sa_ptr,
        sb_ptr,
        m,
        n,
        k,
        stride_am,
        stride_ak,
        stride_bk,
        stride_bn,
        stride_cm,
        stride_cn,
        stride_sa,
        stride_sb,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        BLOCK_K: tl.constexpr,
        GROUP_M: tl.constexpr,
        ROWWISE: tl.constexpr,
        PROMOTE_EVERY: tl.constexpr,
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
        in_m = offs_m < m
        in_n = offs_n < n
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k_block in range(0, tl.cdiv(k, BLOCK_K)):
            k_left = k - k_block * BLOCK_K
            a = tl.load(a_ptrs, mask=in_m[:, None] & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & in_n[None, :], other=0.0)
            acc = tl.dot(a, b, acc, max_num_imprecise_acc=PROMOTE_EVERY)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        if ROWWISE:
            scale_a = tl.load(sa_ptr + offs_m * stride_sa, mask=in_m, other=0.0)
            scale_b = tl.load(sb_ptr + offs_n * stride_sb, mask=in_n, other=0.0)
            acc = acc * scale_a[:, None] * scale_b[None, :]
        else:
            acc = acc * (tl.load(sa_ptr) * tl.load(sb_ptr))
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=in_m[:, None] & in_n[None, :])

    return gemm_fp8
