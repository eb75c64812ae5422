"""The GEMV path's host side: its launcher (the kernel is :mod:`.gemv_kernel`;
which problems get it, :mod:`.dispatch`).

Why: at decode (M of 1 to a few tokens) a GEMM is a stream of the weight,
2 bytes read per multiply-add per token; an H200 needs some 7 us for a
4096x4096 bf16 weight at its 4.8 TB/s. The split-K path's swap-AB tiles
(:mod:`.split_k`) put M on a 16-column ``tl.dot``: 15 of 16 columns are
padding at M = 1, every stage waits on a ``wgmma``, and the weight tile's
shared-memory layout is the tensor core's. The GEMV kernel reads the same
weight rows in 16-byte vectors through ``cp.async`` stages and multiplies on
the CUDA cores, which have work to spare here: in the time HBM delivers one
weight element the fp32 units of all SMs do some 12 multiply-adds (about
30 T/s against 2.4 G elements per ms), fewer once the bf16-to-fp32
conversions and shared-memory reads are counted. At M of 8 or more those
units become the limit, so the dispatch offers this path to a few tokens
only (``dispatch.GEMV_MAX_M``); the kernel computes any M.

K is cut as on the split-K path (:func:`.split_k.plan`), into the same
cached workspace and counters (:func:`.split_k.buffers`): one launch, no
memset, C the same bits whichever program arrives last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gemmreg_plugins.triton_tuned import split_k
from gemmreg_plugins.triton_tuned.launch_config import Config

if TYPE_CHECKING:
    import torch
    from gemmreg_plugins.triton_tuned.launchers import Launcher


def gemv_launcher(config: Config, m: int, n: int, k: int) -> Launcher:
    """``launch(a, b, out)`` for the GEMV path: ``config.block_m`` rows of
    the weight (N) per program, ``config.block_n`` >= M columns of C^T.
    Pointers and strides, so it takes every layout: the weight is read as
    W = B^T (N x K), whose K stride is 1 for a transposed-view B."""
    import triton
    from gemmreg_plugins.triton_tuned.gemv_kernel import gemv_split_k

    if config.path != "gemv":
        raise ValueError(f"{config.name} is not a GEMV config")
    if config.block_n < m:
        raise ValueError(f"{config.name} holds {config.block_n} rows of A, not {m}")
    rows, width, bk = config.block_m, config.block_n, config.block_k
    tiles = triton.cdiv(n, rows)
    cut = split_k.plan(k, bk, config.split_k)
    grid = (tiles, cut.splits)
    even_k = k % bk == 0

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Any:
        partials = counters = None
        if cut.splits > 1:
            partials, counters = split_k.buffers(out, tiles, cut.splits * rows * width)
        return gemv_split_k[grid](
            a,
            b,
            out,
            partials,
            counters,
            n,
            k,
            a.stride(0),
            a.stride(1),
            b.stride(1),
            b.stride(0),
            out.stride(0),
            out.stride(1),
            cut.blocks_per_split,
            ROWS=m,
            BLOCK_M=width,
            BLOCK_N=rows,
            BLOCK_K=bk,
            SPLIT_K=cut.splits,
            NUM_STAGES=config.num_stages,
            A_K_UNIT=a.stride(1) == 1,
            W_K_UNIT=b.stride(0) == 1,
            EVEN_K=even_k,
            REVERSED=split_k.REVERSED,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
        )

    return launch
