"""Stream-K for the persistent kernel's last rounds (``Config.stream_k``).

Why: a persistent launch runs its tiles in rounds of one tile per program,
and the SMs a round leaves idle are lost. On the H200 (132 SMs) 128x256 tiles
come in counts that 132 does not divide (512, 2048, 3584 and 1024 at 4096^3,
8192^3, 8192x14336x4096 and 8192x4096x14336), so the plain kernel takes 128
programs, whole rounds, and leaves 4 SMs idle throughout: 3% of the machine.

How: every SM gets a program. All tiles but the last ``tail_tiles`` go in
whole rounds (``dp_tiles``, data-parallel); the K steps of the rest are cut
into one equal range per program (the "two-tile Stream-K + data-parallel"
hybrid of Osama et al., "Stream-K", PPoPP 2023). The tail holds one full round more than the
remainder, so every range is at least one tile's K steps long: a tile is cut
into two pieces at most, and a range touches three tiles at most. A piece is
written to its slot of a workspace; the second piece of a tile to arrive (an
arrival counter per tile, acquire-release) adds the first and stores C. Two
pieces add the same whichever is added to which, so C is the same bits on
every call. The tail runs before the rounds, so its hand-overs overlap the
work every program still has.

The kernel side is :mod:`.stream_k_tail`; this module is the host's: which
tiles form the tail, and the buffers. The buffers are cached per stream and
left clean by every call (the program that stores a cut tile puts its
counter back to 0), so no call pays for a memset: the arrangement, and its
reasons, are those of the split-K package's workspace
(``examples/gemmreg-splitk``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import torch


REVERSED = False
"""Tests only: hand the tail's ranges out last to first (the kernel's
``SK_REVERSED``), so the interpreter also runs the case where a tile's first
piece arrives second."""


def tail_tiles(tiles: int, programs: int) -> int:
    """How many tiles (the last ones in tile order) are shared out by K steps:
    0 where whole rounds use every program (or there is only one round), else
    the remainder plus one round, so each program's range is at least a tile."""
    if programs < 1 or tiles <= programs or tiles % programs == 0:
        return 0
    return tiles % programs + programs


class Buffers(NamedTuple):
    pieces: torch.Tensor
    """fp32, ``[tail tiles, 2, BLOCK_M, BLOCK_N]``: the two pieces of each tile."""
    counters: torch.Tensor
    """int32, one per tail tile: pieces arrived (0 between calls)."""


_CACHE: dict[tuple[str, int, int, int], Buffers] = {}


def buffers(tensor: torch.Tensor, tail: int, tile_elements: int) -> Buffers:
    """The set for ``tensor``'s device and the current stream, made (its
    counters zeroed) on first use. One set per stream: two calls on different
    streams at once would count each other's pieces. A set made during a
    CUDA-graph capture is zeroed by a memset captured with it; sets are never
    freed, since a captured graph keeps their addresses."""
    import torch

    on_gpu = tensor.device.type == "cuda"  # the interpreter runs on the CPU
    stream = torch.cuda.current_stream(tensor.device).cuda_stream if on_gpu else 0
    key = (str(tensor.device), stream, tail, tile_elements)
    found = _CACHE.get(key)
    if found is None:
        found = Buffers(
            pieces=torch.empty(tail * 2 * tile_elements, dtype=torch.float32, device=tensor.device),
            counters=torch.zeros(tail, dtype=torch.int32, device=tensor.device),
        )
        _CACHE[key] = found
    return found


def cached() -> dict[tuple[str, int, int, int], Buffers]:
    """Every set made so far (tests check that calls leave the counters at 0)."""
    return dict(_CACHE)
