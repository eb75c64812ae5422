"""A K-major copy of B, for fp32 products in TF32 (``Config.transpose_b``).

Why: Hopper's TF32 ``wgmma`` reads shared-memory operands K-major only, and
a row-major B is N-major. The swapped kernel (``tma_rules.tf32_swap``) takes
B^T through registers instead; with B already K-major both operands stay in
shared memory. On the H200 the copy plus that kernel beat the swapped
kernel at the four large shapes it is tuned for (4096^3, 8192^3,
8192x14336x4096, 8192x4096x14336; the plugin's README has ``gemmreg
bench``'s figures). The tuner measures both routes and keeps the faster one.

The copy goes into a fresh buffer from torch's caching allocator on every
call (no cache of ours to invalidate: after the first call the allocator
hands the same block back without a device allocation).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

TILE = 64
"""Edge of the square tile one program moves: 16 KB of fp32 through registers."""


@functools.cache
def transpose_kernel() -> Any:
    import triton
    import triton.language as tl

    @triton.jit
    def transpose(src, dst, rows, cols, stride_src, stride_dst, TILE: tl.constexpr):
        """dst[c, r] = src[r, c]; both row-major with the given row strides."""
        offs_r = (tl.program_id(0) * TILE + tl.arange(0, TILE)).to(tl.int64)
        offs_c = (tl.program_id(1) * TILE + tl.arange(0, TILE)).to(tl.int64)
        mask = (offs_r[:, None] < rows) & (offs_c[None, :] < cols)
        tile = tl.load(src + offs_r[:, None] * stride_src + offs_c[None, :], mask=mask)
        out = dst + offs_c[:, None] * stride_dst + offs_r[None, :]
        tl.store(out, tl.trans(tile), mask=tl.trans(mask))

    return transpose


ROW_ALIGN_BYTES = 16
"""The copy's rows are padded to this: TMA takes row strides in multiples of 16 bytes."""


def k_major(b: torch.Tensor) -> torch.Tensor:
    """B (K x N, row-major) as a K x N view of an N x K copy: the same
    matrix, K-major, which TMA describes through its transpose. The copy's
    rows are padded to 16 bytes, so any K gives a TMA-able stride."""
    import torch
    import triton

    k, n = b.shape
    per_row = ROW_ALIGN_BYTES // b.element_size()
    copy = torch.empty((n, triton.cdiv(k, per_row) * per_row), dtype=b.dtype, device=b.device)
    grid = (triton.cdiv(k, TILE), triton.cdiv(n, TILE))
    transpose_kernel()[grid](b, copy, k, n, b.stride(0), copy.stride(0), TILE=TILE)
    return copy[:, :k].T
