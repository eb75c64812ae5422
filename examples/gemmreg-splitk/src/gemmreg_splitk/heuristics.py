"""How the split is chosen: enough programs to fill the device, never a slice
of K so short that the partial sums cost more than they save."""

from __future__ import annotations

import os

import attrs

SPLIT_K_ENV = "GEMMREG_SPLITK_SPLIT_K"
"""Set to a positive integer to force SPLIT_K instead of choosing it from the shape."""
PROGRAMS_PER_SM = 2
"""Aim for this many programs per multiprocessor."""
MIN_K_BLOCKS_PER_SPLIT = 4
"""Each split sums at least this many BLOCK_K slices of K."""
MAX_SPLIT_K = 256
CPU_PROCESSORS = 4
"""Stands in for the multiprocessor count under Triton's interpreter."""


@attrs.frozen(kw_only=True)
class Config:
    block_m: int
    block_n: int
    block_k: int
    split_k: int
    k_per_split: int
    """Elements of K each split sums: a multiple of ``block_k``."""
    num_warps: int = 4


def _block(size: int) -> int:
    """The smallest tile edge in {16, 32, 64} that covers ``size``, at most 64."""
    for block in (16, 32, 64):
        if size <= block:
            return block
    return 64


def choose(m: int, n: int, k: int, processors: int, block_k: int = 64) -> Config:
    """Tiles from M and N, then SPLIT_K from the device's size and K's length."""
    block_m, block_n = _block(m), _block(n)
    tiles = -(-m // block_m) * -(-n // block_n)
    k_blocks = -(-k // block_k)
    forced = os.environ.get(SPLIT_K_ENV, "").strip()
    if forced:
        if not forced.isdigit() or int(forced) < 1:
            raise ValueError(f"{SPLIT_K_ENV} must be a positive integer, got {forced!r}")
        wanted = int(forced)
    else:
        wanted = max(1, PROGRAMS_PER_SM * processors // tiles)
        wanted = min(wanted, max(1, k_blocks // MIN_K_BLOCKS_PER_SPLIT), MAX_SPLIT_K)
    wanted = min(wanted, k_blocks)  # never an empty split
    k_per_split = -(-k_blocks // wanted) * block_k
    split_k = -(-k // k_per_split)
    return Config(
        block_m=block_m, block_n=block_n, block_k=block_k, split_k=split_k, k_per_split=k_per_split
    )
