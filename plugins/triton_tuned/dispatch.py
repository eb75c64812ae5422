"""Which kernel families a problem gets, from its shape and the SM count
alone (a pure function, so the tests check it for every LLM shape without
a GPU), and the split-K candidates of each.

Three families:

- ``tiles``: the lists of :mod:`.configs` (Gluon and persistent TMA tiles,
  the tiled pointer kernel): one program per output tile, or per SM looping
  over them. Where 128x256 tiles fill every SM at least once, that is the
  whole of it, and the candidates are what they were before the split-K
  path existed (4096^3, 2048 and 8192 tokens of Llama 3 8B's q, o, gate,
  up and down projections).
- ``split_k``: fewer 128x256 tiles than SMs (Llama 3 8B at 128 tokens, or
  k_proj at 2048): the split-K kernel of :mod:`.split_k` with smaller tiles
  and K cut to fill the SMs, and where TMA runs its TMA form
  (:mod:`.tma_split_k`, candidates :mod:`.tma_dispatch`), beside the ``tiles`` family, which the tuner
  weighs against them.
- ``swap_ab``: M of ``SWAP_MAX_M`` or less (decode, 1 to 32 tokens): the
  split-K kernel computing C^T = B^T A^T, with N on the tile's rows, beside
  the tiled pointer kernel (the persistent ones' 128-row tiles do not fit
  M; :func:`.configs.prune` drops them).

Beside the family, a problem of ``GEMV_MAX_M`` rows or fewer in fp16 or
bf16 gets the GEMV kernel's candidates (:mod:`.gemv`), after the split-K
ones, whichever family it is in (a decode step against a vocabulary-sized
weight fills the GPU with tiles, and still streams a weight).

The tuner (:mod:`.tuner`) ranks every candidate a problem gets, so the
dispatch only decides what is worth compiling and timing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from gemmreg_plugins.triton_tuned.launch_config import MIN_BLOCK, Config, KernelPath

Family = Literal["tiles", "split_k", "swap_ab"]

FILL_TILE = (128, 256)
"""The persistent kernels' tile (rows, columns of C): a problem with at least
one such tile per SM fills the GPU without splitting K."""
SWAP_MAX_M = 32
"""M up to this goes on the tile's columns (16 or 32 wide) by swap-AB: below
it a 64-row tile of M (the least one ``wgmma`` takes) is half padding or more."""
MIN_BLOCKS_PER_SPLIT = 2
"""Each program gets at least this many K blocks: with one, nothing of the
next block's loads can overlap the multiply (``num_stages`` has nothing to
pipeline)."""
MAX_SPLIT = 16
"""At most this many ranges of K: past about 4 programs per SM more splits
only add partials to write and read back."""
NEARLY_FULL = 0.9
"""A split count that gives programs to this share of the SMs is timed too,
though it leaves some idle: 128 of 132 SMs with no partials to add may beat
264 programs that write, read back and add them."""
MAX_REDUCE_BYTES = 128 * 1024
"""The fp32 partials one tile's last program reads back and adds, at most:
one SM pulls some 100-200 GB/s from L2, so 128 KiB is about a microsecond,
a tenth of what a 128-token projection takes on an H200; a 128x256 tile's
partial alone is 128 KiB (so that tile is not among ``SPLIT_TILES``)."""

# (rows, columns, BLOCK_K, num_stages, num_warps). Swap-AB: rows run along N,
# the columns (M's side) are fitted to M (16 or 32). Column counts of the
# plain split-K tiles are capped by N and rows by M as ``configs.prune`` does.
SWAP_TILES: tuple[tuple[int, int, int, int, int], ...] = (
    (64, 16, 128, 4, 4),
    (128, 16, 128, 4, 4),
    (64, 16, 256, 3, 4),
)
"""Decode: the weight (B^T) streams through 64 or 128 of its rows at a time,
each row's K contiguous (a transposed-view B is a row-major weight), 128 or
256 of K per stage (16-32 KB of weight per stage: enough bytes in flight per
SM to near the HBM bandwidth with 2-4 programs per SM)."""
SPLIT_TILES: tuple[tuple[int, int, int, int, int], ...] = (
    (64, 128, 64, 4, 4),
    (128, 128, 64, 4, 8),
    (64, 64, 128, 4, 4),
    (64, 256, 64, 3, 8),
    (128, 64, 64, 4, 4),
)
"""Tens to hundreds of tokens: one or two 64- or 128-row blocks of tokens,
the weight cut by N into 64 to 256 columns and by K to fill the SMs. On the
H200 at 128 tokens these came to 1.07-1.42x cuBLAS's device time
(``evidence/2026-12-04-h200-tma-split-k-llm-decode/probes``); the TMA path
below beats them at three of the four points, and the tuner weighs both."""


GEMV_MAX_M = 4
"""The GEMV kernel's candidates go to problems of this many rows or fewer:
it does M fp32 multiply-adds per weight element, and at 8 tokens that is
more than the SMs' fp32 units do while HBM delivers the element
(:mod:`.gemv`); tensor cores (the swap-AB tiles) take over from there."""
GEMV_TILES: tuple[tuple[int, int, int, int], ...] = (
    (32, 256, 3, 4),
    (16, 512, 3, 4),
    (64, 128, 3, 4),
)
"""(weight rows, BLOCK_K, num_stages, num_warps) at M = 1: 16 KB of weight
a stage, 256 B to 1 KB of each row contiguous; 115-128 registers and 33 KB
of shared memory a program in the sm_90 code (four programs an SM, each
with a stage in flight behind the one it multiplies). More rows of A
shrink BLOCK_K, then the weight rows, to ``GEMV_PRODUCTS``."""
GEMV_PRODUCTS = 8192
"""Products the GEMV kernel keeps per program (rows of A x weight rows x
BLOCK_K, fp32): 64 registers a thread at 4 warps."""


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def pow2_at_least(x: int) -> int:
    return 1 << max(0, x - 1).bit_length()


def fills_gpu(m: int, n: int, num_sms: int) -> bool:
    """At least one ``FILL_TILE`` of C per SM."""
    return cdiv(m, FILL_TILE[0]) * cdiv(n, FILL_TILE[1]) >= num_sms


def family(m: int, n: int, k: int, num_sms: int) -> Family:
    """The family a problem is dispatched to (module docstring)."""
    if fills_gpu(m, n, num_sms):
        return "tiles"
    if m <= SWAP_MAX_M:
        return "swap_ab"
    return "split_k"


def splits_for(
    tiles: int,
    k_blocks: int,
    num_sms: int,
    tile_elements: int,
    max_reduce_bytes: int = MAX_REDUCE_BYTES,
) -> tuple[int, ...]:
    """The split counts worth timing for ``tiles`` tiles: the least power of
    two that gives every SM a program, and twice that (two programs per SM
    hide one's epilogue behind the other's loads), and half the first where
    that leaves the SMs ``NEARLY_FULL`` with fewer partials to add (128 tiles
    on 132 SMs: no split at all), each capped so that every
    range keeps ``MIN_BLOCKS_PER_SPLIT`` K blocks, at ``MAX_SPLIT``, and at
    ``max_reduce_bytes`` of partials per tile."""
    by_reduce = max_reduce_bytes // (4 * tile_elements)
    cap = max(1, min(MAX_SPLIT, k_blocks // MIN_BLOCKS_PER_SPLIT, by_reduce))
    fill = pow2_at_least(max(1, cdiv(num_sms, max(1, tiles))))
    counts = {fill, 2 * fill}
    if fill > 1 and tiles * (fill // 2) >= NEARLY_FULL * num_sms:
        counts.add(fill // 2)
    return tuple(sorted({min(count, cap) for count in counts}))


def split_k_candidates(
    m: int, n: int, k: int, num_sms: int, dtype: str, fam: Family
) -> list[Config]:
    """The split-K configs of ``fam`` for one problem, fitted to it: no tile
    edge past the problem's (rounded up to a power of two, at least 16),
    fp32 with half the 16-bit BLOCK_K (the same bytes per stage)."""
    if fam == "tiles":
        return []
    swap = fam == "swap_ab"
    rows, cols = (n, m) if swap else (m, n)
    caps = (max(MIN_BLOCK, pow2_at_least(rows)), max(MIN_BLOCK, pow2_at_least(cols)))
    fitted = []
    for br, bc, bk, stages, warps in SWAP_TILES if swap else SPLIT_TILES:
        br, bc = min(br, caps[0]), (caps[1] if swap else min(bc, caps[1]))
        bk = max(MIN_BLOCK, min(bk // 2 if dtype == "fp32" else bk, pow2_at_least(k)))
        fitted.append((br, bc, bk, stages, warps if br * bc >= 128 * 128 else min(warps, 4)))
    return split_configs("split_k", fitted, (rows, cols), k, num_sms, swap_ab=swap)


def split_configs(
    path: KernelPath,
    fitted: Iterable[tuple[int, int, int, int, int]],
    extent: tuple[int, int],
    k: int,
    num_sms: int,
    max_reduce_bytes: int = MAX_REDUCE_BYTES,
    whole_k_share: float | None = None,
    swap_ab: bool = False,
) -> list[Config]:
    """A split path's configs: each tile already fitted to the problem
    (block_m, block_n, BLOCK_K, stages, warps) over the ``extent`` its
    blocks cut (rows, columns of C, or of C^T), at every split count
    :func:`splits_for` gives its tile count (and 1, unsplit, where those
    tiles alone give programs to ``whole_k_share`` of the SMs); each config
    once, in the order found."""
    kept: list[Config] = []
    for br, bc, bk, stages, warps in fitted:
        tiles = cdiv(extent[0], br) * cdiv(extent[1], bc)
        splits = set(splits_for(tiles, cdiv(k, bk), num_sms, br * bc, max_reduce_bytes))
        if whole_k_share is not None and tiles >= whole_k_share * num_sms:
            splits.add(1)
        for split in sorted(splits):
            config = Config(
                path=path,
                block_m=br,
                block_n=bc,
                block_k=bk,
                num_stages=stages,
                num_warps=warps,
                split_k=split,
                swap_ab=swap_ab,
            )
            if config not in kept:
                kept.append(config)
    return kept


def gemv_tile(rows: int, block_k: int, block_m: int) -> tuple[int, int]:
    """A ``GEMV_TILES`` entry for ``block_m`` rows of A: BLOCK_K halved (to
    128 at least), then the weight rows (to 16), then BLOCK_K again, until
    the products fit ``GEMV_PRODUCTS``."""
    while block_m * rows * block_k > GEMV_PRODUCTS and block_k > 128:
        block_k //= 2
    while block_m * rows * block_k > GEMV_PRODUCTS and rows > MIN_BLOCK:
        rows //= 2
    while block_m * rows * block_k > GEMV_PRODUCTS and block_k > MIN_BLOCK:
        block_k //= 2
    return rows, block_k


def gemv_candidates(m: int, n: int, k: int, num_sms: int, dtype: str) -> list[Config]:
    """The GEMV configs for one problem: none past ``GEMV_MAX_M`` rows or for
    fp32 (declared as TF32 on ``tl.dot``; these multiply in fp32), else every
    ``GEMV_TILES`` entry fitted to M and to the problem (no edge past N or K
    rounded up to a power of two, at least 16), K cut as :func:`splits_for`
    cuts it."""
    if m > GEMV_MAX_M or dtype == "fp32":
        return []
    width = pow2_at_least(m)  # every row of A in one block: the weight's rows cut N
    fitted = []
    for rows, bk, stages, warps in GEMV_TILES:
        rows, bk = gemv_tile(rows, bk, width)
        rows = min(rows, max(MIN_BLOCK, pow2_at_least(n)))
        bk = min(bk, max(MIN_BLOCK, pow2_at_least(k)))
        fitted.append((rows, width, bk, stages, warps))
    return split_configs("gemv", fitted, (n, m), k, num_sms)


def describe() -> str:
    """The rules and tile lists as text, for the tuning cache's key."""
    return (
        f"FILL_TILE={FILL_TILE};SWAP_MAX_M={SWAP_MAX_M};"
        f"MIN_BLOCKS_PER_SPLIT={MIN_BLOCKS_PER_SPLIT};MAX_SPLIT={MAX_SPLIT};"
        f"MAX_REDUCE_BYTES={MAX_REDUCE_BYTES};NEARLY_FULL={NEARLY_FULL};"
        f"SWAP_TILES={SWAP_TILES};SPLIT_TILES={SPLIT_TILES};"
        f"GEMV_MAX_M={GEMV_MAX_M};GEMV_TILES={GEMV_TILES};GEMV_PRODUCTS={GEMV_PRODUCTS}"
    )
