"""Stream-K for the TMA split-K path's tiles where they are fewer than the
SMs (``Config.stream_k`` on the ``tma_split_k`` path; the kernel is
:mod:`.tma_stream_k_kernel`).

Why: at 128x14336x4096 (Llama 3 8B's gate and up projections at 128 tokens)
the best tile there, 128 x 128 with K whole, makes 112 programs on the H100's
and the H200's 132 SMs, so 20 SMs stream none of the weight; the point was
SLOWER than cuBLAS on both cards (``docs/results.md``), whose kernel there
takes 128 programs of 112-column tiles. Split-K cannot even it out (two
ranges of each tile make 224 programs: a second round 40 programs short of
the first), and tiles in pieces of 112 columns ran behind. Stream-K gives
every SM a program: every tile's K steps, laid end to end, are cut into one
equal range per SM (27 or 28 of a tile's 32 steps at 128x14336x4096), and a
tile whose steps two or three ranges share is finished by the last of them
to arrive, which adds the pieces in K order (the same bits whichever
arrives last). 2048x1024x4096 (the k and v projections at 2048 tokens),
128 tiles and SLOWER on both cards too, gets it as well.

On an H100 it was right and behind at both points: device time 1.15x and
1.8x ``torch.mm``'s, where the same tile with one program a tile had 1.02x
(bf16) and 1.01x (fp16) at the first
(``evidence/2026-12-06-h100-fp16-small-tokens-stream-k-and-fp8-squares``).
Every range boundary inside a tile moves a 64 KB fp32 piece out and back,
traffic a memory-bound GEMM of this size feels. The tuner weighs it only with
``GEMMREG_TRITON_TUNED_UNMEASURED=1`` (:func:`.configs.unmeasured`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import attrs
from gemmreg_plugins.triton_tuned import split_k
from gemmreg_plugins.triton_tuned.launch_config import Config
from gemmreg_plugins.triton_tuned.tma_split_k import tma_operands

if TYPE_CHECKING:
    import torch
    from gemmreg_plugins.triton_tuned.launchers import Launcher

REVERSED = False
"""Tests only: hand the ranges out last to first (the kernel's ``REVERSED``),
so the interpreter, which runs programs in order, also runs the case where a
tile's last piece arrives first."""


class Plan(NamedTuple):
    programs: int
    """One per SM, or one per K step where there are fewer steps."""
    max_tiles: int
    """The most tiles one range touches."""
    max_pieces: int
    """The most ranges one tile's steps are shared by (its slots)."""


def plan(tiles: int, k_tiles: int, sms: int) -> Plan:
    """How ``tiles`` tiles of ``k_tiles`` K steps each are shared out over
    ``sms`` programs. Every range is ``total // programs`` steps long or one
    more, never empty. A range of L steps touches at most (L - 2) // k + 2
    tiles of k steps; range ends at least S steps apart cut a tile's k - 1
    inner step boundaries at most (k - 2) // S + 1 times."""
    total = tiles * k_tiles
    programs = max(1, min(sms, total))
    shortest, longest = total // programs, -(-total // programs)
    return Plan(
        programs=programs,
        max_tiles=(longest - 2) // k_tiles + 2,
        max_pieces=(k_tiles - 2) // shortest + 2,
    )


def tma_stream_k_launcher(
    config: Config, m: int, n: int, k: int, input_precision: str, num_sms: int
) -> Launcher:
    """``launch(a, b, out)`` for stream-K over ``num_sms`` programs, falling
    back to the pointer split-K kernel (same tile, K whole) for operands TMA
    cannot take and for fp32."""
    import triton
    from gemmreg_plugins.triton_tuned.tma_stream_k_kernel import gemm_tma_stream_k
    from triton.tools.tensor_descriptor import TensorDescriptor

    bm, bn, bk = config.block_m, config.block_n, config.block_k
    fallback = split_k.split_k_launcher(
        attrs.evolve(config, path="split_k", stream_k=False), m, n, k, input_precision
    )  # launchers.taken_instead names this config
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    shared = plan(tiles, triton.cdiv(k, bk), num_sms)
    grid = (shared.programs,)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Any:
        operands = tma_operands(a, b, out, bm, bn, bk)
        if operands is None:
            return fallback(a, b, out)
        a_desc, b_desc, a_t, b_t = operands
        c_desc = TensorDescriptor.from_tensor(out, [bm, bn])
        pieces, counters = split_k.buffers(out, tiles, shared.max_pieces * bm * bn)
        return gemm_tma_stream_k[grid](
            a_desc,
            b_desc,
            c_desc,
            pieces,
            counters,
            m,
            n,
            k,
            tiles,
            BLOCK_M=bm,
            BLOCK_N=bn,
            BLOCK_K=bk,
            PROGRAMS=shared.programs,
            MAX_TILES=shared.max_tiles,
            MAX_PIECES=shared.max_pieces,
            A_TRANSPOSED=a_t,
            B_TRANSPOSED=b_t,
            INPUT_PRECISION=input_precision,
            REVERSED=REVERSED,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
        )

    return launch
