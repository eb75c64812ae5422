"""The split-K path's host side: how K is cut, its workspace, its launcher
(the kernel is :mod:`.split_k_kernel`; which problems get it,
:mod:`.dispatch`).

Why: where M*N is small against the SM count the tile grid cannot fill the
GPU. On an H200 (132 SMs) Llama 3 8B's k_proj at 128 tokens (128x1024x4096)
is 4 tiles of 128x256; 128 of 132 SMs idle while each of the 4 streams a
quarter of an 8 MiB weight. Cutting K into ``split_k`` ranges gives
``tiles x split_k`` programs, each streaming its share, and the weight
streams at the bandwidth of the whole GPU.

Swap-AB (``Config.swap_ab``): with M = 1..32 tokens a tile of 64 or 128 rows
of M is mostly padding, and the tensor core multiplies zeros. C^T = B^T A^T
puts N (thousands) on the tile's rows and M on its 16 or 32 columns; no data
moves: the kernel reads B^T, A^T and C^T as B, A and C with their strides
exchanged.

The workspace (fp32 partials, one slot per tile and split) and the arrival
counters are cached per device, stream and size, and every call leaves the
counters at 0 (the last program of a tile puts its counter back), so no call
pays for a memset: the arrangement of :mod:`.stream_k`'s buffers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from gemmreg_plugins.triton_tuned.launch_config import Config

if TYPE_CHECKING:
    import torch
    from gemmreg_plugins.triton_tuned.launchers import Launcher


REVERSED = False
"""Tests only: hand the K ranges out last to first (the kernel's
``REVERSED``), so that the interpreter, which runs programs in order, also
runs the case where a tile's first range is the one to arrive last."""


class Plan(NamedTuple):
    """How one problem's K is cut."""

    splits: int
    """Programs per tile; every one has at least one K block."""
    blocks_per_split: int


def plan(k: int, block_k: int, split_k: int) -> Plan:
    """Cut K's blocks into at most ``split_k`` ranges of equal length (the
    last one shorter), none empty: 10 blocks asked in 4 become 4 ranges of 3
    (3+3+3+1), and 10 asked in 8 become 5 of 2, since 8 ranges of 2 would
    leave 3 empty."""
    blocks = max(1, -(-k // block_k))
    per_split = -(-blocks // max(1, split_k))
    return Plan(splits=-(-blocks // per_split), blocks_per_split=per_split)


class Buffers(NamedTuple):
    partials: torch.Tensor
    """fp32, ``[tiles, splits, rows, columns]`` flattened: one slot per program."""
    counters: torch.Tensor
    """int32, one per tile: the programs of it arrived (0 between calls)."""


_CACHE: dict[tuple[str, int, int, int], Buffers] = {}


def buffers(tensor: torch.Tensor, tiles: int, slot_elements: int) -> Buffers:
    """The set for ``tensor``'s device, the current stream and this size, made
    (its counters zeroed) on first use; never freed, since a captured CUDA
    graph keeps their addresses (as :func:`.stream_k.buffers`)."""
    import torch

    on_gpu = tensor.device.type == "cuda"  # the interpreter runs on the CPU
    stream = torch.cuda.current_stream(tensor.device).cuda_stream if on_gpu else 0
    key = (str(tensor.device), stream, tiles, slot_elements)
    found = _CACHE.get(key)
    if found is None:
        found = Buffers(
            partials=torch.empty(tiles * slot_elements, dtype=torch.float32, device=tensor.device),
            counters=torch.zeros(tiles, dtype=torch.int32, device=tensor.device),
        )
        _CACHE[key] = found
    return found


def cached() -> dict[tuple[str, int, int, int], Buffers]:
    """Every set made so far (tests check that calls leave the counters at 0)."""
    return dict(_CACHE)


def split_k_launcher(config: Config, m: int, n: int, k: int, input_precision: str) -> Launcher:
    """``launch(a, b, out)`` for the split-K path: pointers and strides, so it
    takes every layout (padded rows included) and needs no fallback."""
    import triton
    from gemmreg_plugins.triton_tuned.split_k_kernel import gemm_split_k

    swap = config.swap_ab
    rows, cols = (n, m) if swap else (m, n)
    br, bc, bk = config.block_m, config.block_n, config.block_k
    tiles = triton.cdiv(rows, br) * triton.cdiv(cols, bc)
    cut = plan(k, bk, config.split_k)
    grid = (tiles, cut.splits)

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Any:
        x, y, c = (b.T, a.T, out.T) if swap else (a, b, out)
        partials = counters = None
        if cut.splits > 1:
            partials, counters = buffers(out, tiles, cut.splits * br * bc)
        return gemm_split_k[grid](
            x,
            y,
            c,
            partials,
            counters,
            rows,
            cols,
            k,
            x.stride(0),
            x.stride(1),
            y.stride(0),
            y.stride(1),
            c.stride(0),
            c.stride(1),
            cut.blocks_per_split,
            BLOCK_R=br,
            BLOCK_C=bc,
            BLOCK_K=bk,
            SPLIT_K=cut.splits,
            X_K_UNIT=x.stride(1) == 1,
            Y_K_UNIT=y.stride(0) == 1,
            EVEN_K=k % bk == 0,
            INPUT_PRECISION=input_precision,
            REVERSED=REVERSED,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
        )

    return launch
