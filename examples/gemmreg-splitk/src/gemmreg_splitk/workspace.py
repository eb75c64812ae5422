"""The cached fp32 buffers and arrival counters the kernel reduces through.

They are zeroed once, when first made; every call leaves them zero again
(the program that reduces a tile resets its counter and, in atomic mode, its
accumulator tile), so no call pays for a memset. The one exception: the
reduce-scatter's arrival counts (:mod:`gemmreg_splitk.scatter`) only grow,
call after call (64-bit), so sets are kept apart by ``kind`` as well as by
size: a serial launch handed a scatter set would misread them (the H200
tuner caught exactly that with an earlier scatter, whose never-reset words
sat where a serial launch counted: half of C unwritten).

**One set per stream.** Two calls on different streams using one set at once
would race: each would count the other's arrivals. So the key holds the
current stream's handle; calls on one stream are ordered, so they can share.
A set made while a CUDA graph is being captured (the capture stream is a
stream of its own) is zeroed by one memset captured into that graph: every
replay starts from zeros, and the calls after it in the graph find the
buffers clean. A second graph captured later on the same capture stream
shares that set, so it needs the first replayed once before it runs
(gemmreg's timing replays each graph right after capturing it). Sets are
never freed (a captured graph keeps using their addresses); they are small:
at most ``SPLIT_K x M x N`` fp32 values plus one int32 per tile (an int64
for the scatter, one int32 per tree node for the tree).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import torch


class Buffers(NamedTuple):
    partials: torch.Tensor
    """Deterministic: ``[SPLIT_K, M, N]`` fp32, one slot per K slice. Atomic: ``[M, N]`` fp32."""
    counters: torch.Tensor
    """int32, one per output tile (one per tree node and tile with the tree
    reduction): how many K slices of the tile (or node) have arrived. The
    scatter's are int64 and count every call's arrivals."""


KINDS = ("atomic", "slots", "scatter")
"""What a set is laid out for: atomic mode's accumulator, deterministic mode's
per-slice slots (serial and tree reductions, counters left at zero), or the
slots with the reduce-scatter's ever-growing 64-bit counts."""

Key = tuple[str, int, int, int, int, int, str]
"""(device, stream handle, M, N, SPLIT_K, counters, kind)"""

_CACHE: dict[Key, Buffers] = {}


def buffers(
    device: str, stream: int, m: int, n: int, split_k: int, counters: int, kind: str
) -> Buffers:
    """The set for this stream, problem and ``kind`` (one of ``KINDS``), made
    (zeroed) on first use."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    key = (device, stream, m, n, split_k, counters, kind)
    found = _CACHE.get(key)
    if found is None:
        found = _make(device, m, n, split_k, counters, kind)
        _CACHE[key] = found
    return found


def _make(device: str, m: int, n: int, split_k: int, counters: int, kind: str) -> Buffers:
    """One zero fill per set (a single memset where a graph captures it): the
    deterministic slots are always written before they are read, so only the
    counters start at zero; the atomic accumulator and its counters share one
    zeroed allocation."""
    import torch

    if kind != "atomic":
        count = torch.int64 if kind == "scatter" else torch.int32
        return Buffers(
            partials=torch.empty((split_k, m, n), dtype=torch.float32, device=device),
            counters=torch.zeros(counters, dtype=count, device=device),
        )
    flat = torch.zeros(m * n + counters, dtype=torch.float32, device=device)
    return Buffers(partials=flat[: m * n].view(1, m, n), counters=flat[m * n :].view(torch.int32))


def cached() -> dict[Key, Buffers]:
    """Every set made so far (tests check that calls leave them clean)."""
    return dict(_CACHE)
