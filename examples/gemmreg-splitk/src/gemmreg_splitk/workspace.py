"""The cached fp32 buffers and arrival counters the kernel reduces through.

They are zeroed once, when first made; every call leaves them zero again
(the program that reduces a tile resets its counter and, in atomic mode, its
accumulator tile), so no call pays for a memset.

**One set per stream.** Two calls on different streams using one set at once
would race: each would count the other's arrivals. So the key holds the
current stream's handle; calls on one stream are ordered, so they can share.
A set made while a CUDA graph is being captured is filled with zeros by a
memset captured into that graph: every replay starts from zeros, and the
calls after it in the graph find the buffers clean. Sets are never freed
(a captured graph keeps using its addresses); they are small: at most
``SPLIT_K x M x N`` fp32 values plus one int32 per tile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import torch


class Buffers(NamedTuple):
    partials: torch.Tensor
    """Deterministic: ``[SPLIT_K, M, N]`` fp32, one slot per K slice. Atomic: ``[M, N]`` fp32."""
    counters: torch.Tensor
    """int32, one per output tile: how many K slices of the tile have arrived."""


Key = tuple[str, int, int, int, int, int, bool]
"""(device, stream handle, M, N, SPLIT_K, tiles, atomic)"""

_CACHE: dict[Key, Buffers] = {}


def buffers(
    device: str, stream: int, m: int, n: int, split_k: int, tiles: int, atomic: bool
) -> Buffers:
    """The set for this stream and problem, made (zeroed) on first use."""
    key = (device, stream, m, n, split_k, tiles, atomic)
    found = _CACHE.get(key)
    if found is None:
        import torch

        slots = 1 if atomic else split_k
        found = Buffers(
            partials=torch.zeros((slots, m, n), dtype=torch.float32, device=device),
            counters=torch.zeros(tiles, dtype=torch.int32, device=device),
        )
        _CACHE[key] = found
    return found


def cached() -> dict[Key, Buffers]:
    """Every set made so far (tests check that calls leave them clean)."""
    return dict(_CACHE)
