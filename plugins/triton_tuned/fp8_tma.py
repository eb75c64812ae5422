"""The host side of :mod:`.fp8_tma_kernel` (``Fp8Config.tma``): the configs
the config probe times, and descriptors, grid and workspace for one launch.
A module of its own so that :mod:`.fp8` stays the path's rule and dispatch;
:func:`.fp8.run` imports it when a TMA config runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gemmreg_plugins.triton_tuned import split_k
from gemmreg_plugins.triton_tuned.fp8 import Fp8Config
from gemmreg_plugins.triton_tuned.launch_config import MAX_PIECES, piece_widths

if TYPE_CHECKING:
    import torch


def _tma(bm: int, bn: int, warps: int, stages: int, split: int = 1, pieces: int = 1) -> Fp8Config:
    return Fp8Config(block_m=bm, block_n=bn, block_k=128, num_warps=warps, num_stages=stages,
                     tma=True, split_k=split, pieces=pieces)  # fmt: skip


TMA_PROBED: tuple[Fp8Config, ...] = (
    _tma(128, 64, 8, 3, pieces=3),
    _tma(128, 64, 8, 4, pieces=3),
    _tma(128, 64, 8, 6, pieces=3),
    _tma(64, 64, 4, 6),
    _tma(128, 64, 8, 6, split=2),
    _tma(128, 128, 8, 4),
    _tma(128, 128, 8, 4, split=4),
)
"""The TMA kernel's configs (:mod:`.fp8_tma_kernel`) the config probe times
(``scripts/probes/fp8_grouped_configs.py``); the rule takes the 64 x 64
tiles and the 128 x 64 ones in 2 ranges (:func:`.fp8.config_for`), the
others ran behind. Written for the two 128-token points where the rule's
tiles lost to cuBLASLt: 112-column tiles in pieces (128 programs at 128x14336x4096,
3 to 6 stages of 30 KB), and for 128x4096x14336's long K 128 programs of
64 x 64 whole, of 128 x 64 in 2 ranges or of 128 x 128 in 4, beside
cuBLASLt's own 32 tiles of 128 x 128 through TMA."""


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
    widths = piece_widths(config.block_n, config.pieces)
    unused = [None] * (MAX_PIECES - config.pieces)  # the kernel's arguments of pieces not cut
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
