"""The TMA split-K path's host side (``Config.path == "tma_split_k"``; the
kernel is :mod:`.tma_split_k_kernel`).

Why: at 128 tokens (Llama 3 8B's projections, 128 x 1024..14336 x 4096) the
tiles cannot fill the GPU and the pointer kernel of :mod:`.split_k` streams
the weight through ``cp.async``: on the H200 its best configs came to
1.07-1.24x cuBLAS's device time there
(``evidence/2026-12-03-h200-llm-projections-bf16/decodeprobe``), while the
persistent kernel's TMA tile product was the nearest at the one point its
tiles fill (128x14336x4096: 1.06x). This path puts that TMA product under
split-K's grid: ``tiles x splits`` programs, each streaming its K range of
the weight through TMA boxes, partials added by the last to arrive.

The K ranges are cut as :func:`.split_k.plan` cuts them, the workspace and
counters are :func:`.split_k.buffers` (cached per device, stream and size,
left at 0 by every call). Operands TMA cannot take (strides not multiples of
16 bytes, a misaligned base) go to the pointer split-K kernel with the same
tile and split, which takes every layout; so do fp32 operands (TF32's
``wgmma`` reads B K-major only, which the persistent kernel arranges and
this one does not: its candidates are 16-bit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from gemmreg_plugins.triton_tuned import split_k
from gemmreg_plugins.triton_tuned.launch_config import MAX_PIECES, Config, piece_widths
from gemmreg_plugins.triton_tuned.tma_rules import (
    b_descriptor,
    is_transposed,
    operand_descriptors,
    tma_refusal,
)

if TYPE_CHECKING:
    import torch
    from gemmreg_plugins.triton_tuned.launchers import Launcher


def tma_operands(
    a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, bm: int, bn: int, bk: int
) -> tuple[Any, Any, bool, bool] | None:
    """A's and B's descriptors for ``bm x bk`` and ``bk x bn`` boxes and whether
    each is transposed, for the launches of every TMA split-K form (whole
    tiles, tiles in pieces, stream-K); None where the pointer split-K kernel
    takes the call instead: fp32 (TF32's ``wgmma`` would need B K-major) and
    operands TMA cannot take."""
    if a.element_size() == 4 or tma_refusal(a, b, out) is not None:
        return None
    a_t, b_t = is_transposed(a), is_transposed(b)
    return (*operand_descriptors(a, b, a_t, b_t, bm, bn, bk), a_t, b_t)


REVERSED = False
"""Tests only: hand the K ranges out last to first (as :data:`.split_k.REVERSED`)."""


def tma_split_k_launcher(config: Config, m: int, n: int, k: int, input_precision: str) -> Launcher:
    """``launch(a, b, out)`` for the TMA split-K path, falling back to the
    pointer split-K kernel for operands TMA cannot take."""
    import triton
    from gemmreg_plugins.triton_tuned.tma_split_k_kernel import gemm_tma_split_k
    from triton.tools.tensor_descriptor import TensorDescriptor

    bm, bn, bk = config.block_m, config.block_n, config.block_k
    fallback = split_k.split_k_launcher(
        attrs.evolve(config, path="split_k", pieces=1), m, n, k, input_precision
    )  # launchers.taken_instead names this config
    if config.pieces > 1:
        return _pieces_launcher(config, m, n, k, input_precision, fallback)
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    cut = split_k.plan(k, bk, config.split_k)
    grid = (tiles, cut.splits)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Any:
        operands = tma_operands(a, b, out, bm, bn, bk)
        if operands is None:
            return fallback(a, b, out)
        a_desc, b_desc, a_t, b_t = operands
        c_desc = TensorDescriptor.from_tensor(out, [bm, bn])
        partials = counters = None
        if cut.splits > 1:
            partials, counters = split_k.buffers(out, tiles, cut.splits * bm * bn)
        return gemm_tma_split_k[grid](
            a_desc,
            b_desc,
            c_desc,
            partials,
            counters,
            m,
            n,
            k,
            cut.blocks_per_split,
            BLOCK_M=bm,
            BLOCK_N=bn,
            BLOCK_K=bk,
            SPLIT_K=cut.splits,
            A_TRANSPOSED=a_t,
            B_TRANSPOSED=b_t,
            INPUT_PRECISION=input_precision,
            REVERSED=REVERSED,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
        )

    return launch


def _pieces_launcher(
    config: Config, m: int, n: int, k: int, input_precision: str, fallback: Launcher
) -> Launcher:
    """``launch(a, b, out)`` for a tile in pieces (:mod:`.tma_pieces_kernel`):
    one program per tile of ``config.columns`` columns, K whole; a box of B and
    of C per piece. Operands TMA cannot take go to ``fallback``."""
    import triton
    from gemmreg_plugins.triton_tuned.tma_pieces_kernel import gemm_tma_pieces
    from triton.tools.tensor_descriptor import TensorDescriptor

    bm, bk = config.block_m, config.block_k
    widths = piece_widths(config.block_n, config.pieces)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, config.columns),)
    unused = [None] * (MAX_PIECES - config.pieces)  # the kernel's arguments of pieces not cut

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Any:
        operands = tma_operands(a, b, out, bm, widths[0], bk)
        if operands is None:
            return fallback(a, b, out)
        a_desc, b_desc, a_t, b_t = operands
        describe = TensorDescriptor.from_tensor
        b_boxes = [b_desc, *(b_descriptor(b, b_t, width, bk, describe) for width in widths[1:])]
        c_boxes = [describe(out, [bm, width]) for width in widths]
        return gemm_tma_pieces[grid](
            a_desc,
            *b_boxes,
            *unused,
            *c_boxes,
            *unused,
            m,
            n,
            k,
            BLOCK_M=bm,
            BLOCK_N=config.block_n,
            BLOCK_K=bk,
            PIECES=config.pieces,
            COLUMNS=config.columns,
            A_TRANSPOSED=a_t,
            B_TRANSPOSED=b_t,
            INPUT_PRECISION=input_precision,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
        )

    return launch
