"""The host side of :mod:`.fp8_tma_kernel` (``Fp8Config.tma``): descriptors,
grid and workspace for one launch. A module of its own so that :mod:`.fp8`
stays the path's rule and dispatch; imported when a TMA config runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gemmreg_plugins.triton_tuned import split_k

if TYPE_CHECKING:
    import torch
    from gemmreg_plugins.triton_tuned.fp8 import Fp8Config


def run_tma_kernel(
    config: Fp8Config,
    rowwise: bool,
    a: torch.Tensor,
    b: torch.Tensor,
    out: torch.Tensor,
    scale_a: torch.Tensor,
    scale_b: torch.Tensor,
) -> Any:
    """One launch of :mod:`.fp8_tma_kernel` for operands :func:`.fp8.tma_takes` takes
    (the tests hand it fp16 operands holding e4m3 values: the interpreter has
    no fp8): a box of the weight and of C per piece, the K ranges cut as
    :func:`.split_k.plan` cuts them, the partials in :func:`.split_k.buffers`."""
    from gemmreg_plugins.triton_tuned.fp8_tma_kernel import gemm_fp8_tma
    from triton.tools.tensor_descriptor import TensorDescriptor

    m, k = a.shape
    n = b.shape[1]
    bm, bk = config.block_m, config.block_k
    widths = [config.block_n >> piece for piece in range(config.pieces)]
    unused = [None] * (3 - config.pieces)
    describe = TensorDescriptor.from_tensor
    weights = [describe(b.T, [width, bk]) for width in widths]
    outputs = [describe(out, [bm, width]) for width in widths]
    tiles = -(-m // bm) * -(-n // config.columns)
    cut = split_k.plan(k, bk, config.split_k)
    partials = counters = None
    if cut.splits > 1:
        partials, counters = split_k.buffers(out, tiles, cut.splits * bm * config.block_n)
    return gemm_fp8_tma[(tiles, cut.splits)](
        describe(a, [bm, bk]),
        *weights,
        *unused,
        *outputs,
        *unused,
        scale_a,
        scale_b,
        partials,
        counters,
        m,
        n,
        k,
        scale_a.stride(0) if rowwise else 0,
        scale_b.stride(1) if rowwise else 0,
        cut.blocks_per_split,
        BLOCK_M=bm,
        BLOCK_N=config.block_n,
        BLOCK_K=bk,
        PIECES=config.pieces,
        COLUMNS=config.columns,
        SPLIT_K=cut.splits,
        ROWWISE=rowwise,
        PROMOTE_EVERY=bk,
        num_warps=config.num_warps,
        num_stages=config.num_stages,
    )
