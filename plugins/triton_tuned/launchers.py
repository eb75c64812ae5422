"""Launch closures for the kernels of :mod:`.kernels`: ``launch(a, b, out)``,
the grid and the config fixed when the closure is made, strides, layouts and
TMA descriptors read per call (the core may hand over any layout)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
from gemmreg_plugins.triton_tuned import (
    gemv,
    split_k,
    stream_k,
    tma_split_k,
    tma_stream_k,
    transpose,
)
from gemmreg_plugins.triton_tuned.configs import Config
from gemmreg_plugins.triton_tuned.kernels import persistent_tma_kernel, tiled_kernel
from gemmreg_plugins.triton_tuned.tma_rules import (
    is_transposed,
    operand_descriptors,
    tf32_swap,
    tma_refusal,
)

if TYPE_CHECKING:
    import torch

Launcher = Callable[["torch.Tensor", "torch.Tensor", "torch.Tensor"], Any]
"""``launch(a, b, out)``: it hands back what Triton's launch does (the compiled
kernel, natively; the tuner reads its binary, ``device_trial.DeviceTrial.binary``)."""


def tiled_launcher(config: Config, m: int, n: int, k: int, input_precision: str) -> Launcher:
    """``launch(a, b, out)`` for the tiled path: the grid is fixed here, the
    strides are read from the operands on every call."""
    import triton

    kernel = tiled_kernel()
    grid = (triton.cdiv(m, config.block_m) * triton.cdiv(n, config.block_n),)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Any:
        return kernel[grid](
            a,
            b,
            out,
            m,
            n,
            k,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            out.stride(0),
            out.stride(1),
            BLOCK_M=config.block_m,
            BLOCK_N=config.block_n,
            BLOCK_K=config.block_k,
            GROUP_M=config.group_m,
            INPUT_PRECISION=input_precision,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
        )

    return launch


def persistent_programs(tiles: int, num_sms: int) -> int:
    """How many programs a persistent launch starts: the fewest that still
    finish in as many rounds of tiles as one program per SM would.

    With 132 SMs and 512 tiles (4096^3 in 128x256 tiles), 132 programs take 4
    rounds and so do 128; the 128 each take exactly four tiles, and every round
    walks whole ``GROUP_M`` groups of tiles instead of a window that slides
    across them. In an interleaved probe on the H200 (December 2026,
    ``evidence/2026-12-01-h200-tuner-interleaved-rounds/c2/interleave.log.gz``) the flat
    128x256 configs ran 0.6-1.2% faster with 128 programs than with 132 at
    4096^3 in fp16 and bf16, and within 0.6% either way at the three larger
    shapes it is tuned for (8192^3, 8192x14336x4096, 8192x4096x14336)."""
    if tiles <= num_sms:
        return tiles
    rounds = -(-tiles // num_sms)
    return -(-tiles // rounds)


def persistent_tma_launcher(
    config: Config,
    m: int,
    n: int,
    k: int,
    input_precision: str,
    num_sms: int,
    fallback: Launcher,
) -> Launcher:
    """``launch(a, b, out)`` for the persistent TMA path. The descriptors are
    host-side records (no device allocation); operands TMA cannot take go to
    ``fallback``, the tiled launcher chosen with this config."""
    import triton
    from triton.tools.tensor_descriptor import TensorDescriptor

    kernel = persistent_tma_kernel()
    bm, bn, bk = config.block_m, config.block_n, config.block_k
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    if not config.persistent:
        programs = tiles
    elif config.stream_k:  # every SM, the last rounds cut by K steps
        programs = min(tiles, num_sms)
    else:
        programs = persistent_programs(tiles, num_sms)
    grid = (programs,)
    # The kernel's step between one program's tiles, a constexpr: where every
    # program has one tile any step past the grid will do, and the SM count
    # keeps those launches on one compiled kernel whatever their tile count.
    step = programs if config.persistent and tiles > num_sms else num_sms
    tail = stream_k.tail_tiles(tiles, programs) if config.stream_k else 0
    c_block = [bm, bn // config.epilogue_parts]

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Any:
        if tma_refusal(a, b, out) is not None:
            return fallback(a, b, out)
        a_t, b_t = is_transposed(a), is_transposed(b)
        swap = tf32_swap(input_precision, a, a_t, b_t)
        if swap and config.transpose_b:
            b, b_t, swap = transpose.k_major(b), True, False
        a_desc, b_desc = operand_descriptors(a, b, a_t, b_t, bm, bn, bk)
        c_desc = TensorDescriptor.from_tensor(out, c_block)
        pieces = counters = None
        if tail:
            pieces, counters = stream_k.buffers(out, tail, bm * bn)
        return kernel[grid](
            a_desc,
            b_desc,
            c_desc,
            pieces,
            counters,
            m,
            n,
            k,
            tiles - tail,
            BLOCK_M=bm,
            BLOCK_N=bn,
            BLOCK_K=bk,
            GROUP_M=config.group_m,
            PROGRAMS=step,
            A_TRANSPOSED=a_t,
            B_TRANSPOSED=b_t,
            FLATTEN=config.flatten,
            WS=config.ws,
            PERSISTENT=config.persistent,
            EPILOGUE_PARTS=config.epilogue_parts,
            INPUT_PRECISION=input_precision,
            TF32_SWAP=swap,
            STREAM_K=tail > 0,
            SK_REVERSED=stream_k.REVERSED,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
        )

    return launch


def gluon_ws_launcher(
    config: Config, m: int, n: int, k: int, num_sms: int, fallback: Launcher
) -> Launcher:
    """``launch(a, b, out)`` for the Gluon path (:mod:`.gluon_ws`): 16-bit
    operands that TMA can take, A row-major, B row-major or a transposed view
    (the kernel's ``B_TRANSPOSED``); any other operands go to ``fallback``.
    One program per SM at most, as :func:`persistent_programs` counts them."""
    import torch
    import triton

    bm, bn, bk = config.block_m, config.block_n, config.block_k
    programs = persistent_programs(triton.cdiv(m, bm) * triton.cdiv(n, bn), num_sms)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Any:
        if (
            a.dtype not in (torch.float16, torch.bfloat16)
            or is_transposed(a)
            or tma_refusal(a, b, out) is not None
        ):
            return fallback(a, b, out)
        # Imported here, past the fallback: only a Triton with this Gluon has it.
        from gemmreg_plugins.triton_tuned import gluon_ws

        b_t = is_transposed(b)
        a_desc, b_desc, c_desc = gluon_ws.descriptors(a, b, out, bm, bn, bk, b_t)
        return gluon_ws.gemm_gluon_ws[(programs,)](
            a_desc,
            b_desc,
            c_desc,
            m,
            n,
            k,
            GROUP_M=config.group_m,
            PROGRAMS=programs,
            STAGES=config.num_stages,
            B_TRANSPOSED=b_t,
            num_warps=config.num_warps,
        )

    return launch


def gluon_tf32_launcher(
    config: Config, m: int, n: int, k: int, num_sms: int, fallback: Launcher
) -> Launcher:
    """``launch(a, b, out)`` for the TF32 Gluon path (:mod:`.gluon_tf32`):
    fp32 operands that TMA can take, A and B row-major (a K-major B needs no
    swap: the persistent kernel reads it as it lies); any other operands go
    to ``fallback``. One program per SM at most, as :func:`persistent_programs`
    counts them; TF32 pinned, as the plugin declares it."""
    import torch
    import triton

    bm, bn, bk = config.block_m, config.block_n, config.block_k
    programs = persistent_programs(triton.cdiv(m, bm) * triton.cdiv(n, bn), num_sms)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Any:
        if (
            a.dtype != torch.float32
            or is_transposed(a)
            or is_transposed(b)
            or tma_refusal(a, b, out) is not None
        ):
            return fallback(a, b, out)
        # Imported here, past the fallback: only a Triton with this Gluon has it.
        from gemmreg_plugins.triton_tuned import gluon_tf32

        a_desc, b_desc = gluon_tf32.descriptors(a, b, bm, bn, bk)
        return gluon_tf32.gemm_gluon_tf32[(programs,)](
            a_desc,
            b_desc,
            out,
            m,
            n,
            k,
            out.stride(0),
            GROUP_M=config.group_m,
            PROGRAMS=programs,
            STAGES=config.num_stages,
            VECTOR_STORE=config.vector_store,
            num_warps=config.num_warps,
            default_dot_input_precision="tf32",
        )

    return launch


def taken_instead(config: Config, fallback: Config) -> Config | None:
    """The config a launch of ``config`` (made by :func:`launcher` with this
    tiled ``fallback``) runs for operands its path cannot take: the tiled
    fallback for the persistent TMA and Gluon paths, the pointer split-K
    kernel in the same tiles for the TMA split-K path (a tile in pieces: its
    first piece's); None for the paths that take every layout."""
    if config.path in ("tiled", "split_k", "gemv"):
        return None
    if config.path == "tma_split_k":
        return attrs.evolve(config, path="split_k", pieces=1, stream_k=False)
    return fallback


def launcher(
    config: Config,
    m: int,
    n: int,
    k: int,
    input_precision: str,
    num_sms: int,
    fallback: Config | None = None,
) -> Launcher:
    """The launch closure for ``config``; a persistent or Gluon config needs
        the tiled ``fallback`` for operands its path cannot take (the tiled,
        split-K and GEMV paths take every layout; the TMA split-K path falls back
    to the pointer split-K kernel)."""
    if config.path == "tiled":
        return tiled_launcher(config, m, n, k, input_precision)
    if config.path == "split_k":
        return split_k.split_k_launcher(config, m, n, k, input_precision)
    if config.path == "tma_split_k" and config.stream_k:
        return tma_stream_k.tma_stream_k_launcher(config, m, n, k, input_precision, num_sms)
    if config.path == "tma_split_k":
        return tma_split_k.tma_split_k_launcher(config, m, n, k, input_precision)
    if config.path == "gemv":
        return gemv.gemv_launcher(config, m, n, k)
    if fallback is None or fallback.path != "tiled":
        raise ValueError(f"{config.name} needs a tiled fallback config")
    if config.path in ("gluon_ws", "gluon_tf32"):
        make = gluon_ws_launcher if config.path == "gluon_ws" else gluon_tf32_launcher
        return make(config, m, n, k, num_sms, tiled_launcher(fallback, m, n, k, input_precision))
    return persistent_tma_launcher(
        config,
        m,
        n,
        k,
        input_precision,
        num_sms,
        tiled_launcher(fallback, m, n, k, input_precision),
    )
