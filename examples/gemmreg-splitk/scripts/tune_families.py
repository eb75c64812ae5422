"""Stage 1's candidate families beyond the plain tiles x splits grid of
``tune_grid.stage1``, and the helpers both modules build candidates with."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from gemmreg_splitk import heuristics, tuned

MIN_K_STEPS = 2
"""Every K slice spans at least this many BLOCK_K steps."""
EDGES = (16, 32, 64, 128)
SMEM_LIMIT = 200 * 1024
"""Pipelined A and B tiles of one program stay under this (an H200 SM has 228 KiB)."""
STREAMING_CLASSES = ("flat32", "flat64")
"""Memory-bound shape classes (B is 128 MiB at 64x4096x16384 and 32x8192x8192):
stage 1 adds wide tiles with deep pipelines there, through TMA too where it runs."""
STREAMING_BLOCK_N = (128, 256)
STREAMING_BLOCK_K = (64, 128)
STREAMING_FILLS = (1.0, 2.0)
"""Big tiles stream long K slices: about one or two programs per SM."""
STREAMING_WARPS = 8
STREAMING_MAX_STAGES = 6
ONE_PER_SM_TILES = ((64, 128), (128, 64), (128, 128))
"""(BLOCK_N, BLOCK_K) of the TMA family with about one program per SM."""
ONE_PER_SM_STAGES = (4, 5)
"""Its pipeline depths (each capped by ``SMEM_LIMIT``): in one H200 probe the
same config ran 2.5x slower one depth apart
(evidence/2026-12-01-h200-split-k-flat-shapes/c3/flatcfg.json)."""
FANINS = (4, 8)
"""Deterministic mode's wide trees: split 32 in 3 or 2 hand-overs instead of 5."""
FANIN_MIN_SPLIT = 16
"""Wide trees only from this split up: below it the binary tree has <= 4 levels."""
FANIN_SPLITS = (0.5, 1.0, 2.0)
"""Stage 1 tries the wide trees on atomic mode's measured tiles at these
multiples of its split: atomic mode's split is what deterministic mode could
not afford with one program reading every partial."""


SCATTER_MAX_TILES = 16
"""The reduce-scatter family only for outputs of at most this many of its
tiles: it spins only with at most one program per SM, so its split is at
most ``SMs / tiles``, which must stay high for the tiny grids it is for."""


class Candidate(NamedTuple):
    config: heuristics.Config
    label: str
    """``current`` (what the plugin picks today), ``grid``, ``stage2``, ``retime``, ``broken``."""


def edges(size: int) -> list[int]:
    """The ``EDGES`` a tile may take along an axis of ``size``: up to the first
    power of two covering it (16 at least)."""
    return [e for e in EDGES if e <= max(16, 1 << (size - 1).bit_length())]


def pow2_near(x: float) -> int:
    return 1 if x <= 1 else 1 << round(math.log2(x))


def make(
    m: int, n: int, k: int, bm: int, bn: int, bk: int, split: int, **fields: Any
) -> heuristics.Config:
    """A config like the plugin's (``heuristics._finish`` sizes stages and reduce chunks)."""
    return heuristics._finish(bm, bn, bk, split, k, 2, **fields)


def swappable(bm: int, bn: int, quick: bool) -> bool:
    """Worth launching as C^T = B^T A^T: the M tile is below wgmma's 64 rows and
    the N tile is not (quick: always, so the interpreter runs that path too)."""
    return quick or bm < 64 <= bn


def streaming(m: int, n: int, k: int, procs: int, tma: bool) -> list[Candidate]:
    """More bytes in flight per SM for a memory-bound flat problem: BLOCK_N up
    to 256, BLOCK_K up to 128, 8 warps, as many stages as fit ``SMEM_LIMIT``
    (at most ``STREAMING_MAX_STAGES``), with and without TMA; a skinny M tile
    launched swapped (its N tile is then wgmma's M; stage 2 tries it unswapped)."""
    bm = heuristics._edges(m, heuristics.MAX_BLOCK_M)[0]  # the widest M tile the plugin uses
    out = []
    for bn in STREAMING_BLOCK_N:
        for bk in STREAMING_BLOCK_K:
            stages = min(STREAMING_MAX_STAGES, SMEM_LIMIT // ((bm + bn) * bk * 2))
            tiles = -(-m // bm) * -(-n // bn)
            most = max(1, k // (MIN_K_STEPS * bk))
            for split in sorted({min(most, pow2_near(f * procs / tiles)) for f in STREAMING_FILLS}):
                for with_tma in (False, True) if tma else (False,):
                    config = make(m, n, k, bm, bn, bk, split, num_warps=STREAMING_WARPS,
                                   num_stages=stages, swap_ab=swappable(bm, bn, False),
                                   tma=with_tma)  # fmt: skip
                    out.append(Candidate(config, "grid"))
    return out


def one_per_sm(m: int, n: int, k: int, procs: int) -> list[Candidate]:
    """TMA tiles covering all of a flat problem's M, with splits that give
    about one program per SM, 4 warps, both launch orientations. On the H200
    a bare TMA main loop of this shape out-streamed every config of the grid
    above (64x4096x16384 fp16: 44.7 us with L2 flushed, against 47.4 us for
    torch.mm and about 48 us for the tuned split-K), and the plugin's own
    kernel in this shape ran at 0.99-1.03x torch.mm (one program per SM,
    64x64x128, split 2); a config one pipeline stage deeper or shallower
    could run 2.5x slower, so the tuner times each
    (evidence/2026-12-01-h200-split-k-flat-shapes: c2/stream.json, c3/flatcfg.json)."""
    bm = heuristics._edges(m, heuristics.MAX_BLOCK_M)[0]  # the widest M tile the plugin uses
    out = []
    for bn, bk in ONE_PER_SM_TILES:
        tiles = -(-m // bm) * -(-n // bn)
        split = min(max(1, k // (MIN_K_STEPS * bk)), pow2_near(procs / tiles))
        fit = SMEM_LIMIT // ((bm + bn) * bk * 2)
        for stages in sorted({min(fit, s) for s in ONE_PER_SM_STAGES}):
            for swap in (False, True):
                config = make(m, n, k, bm, bn, bk, split, num_warps=4, num_stages=stages,
                               swap_ab=swap, tma=True)  # fmt: skip
                out.append(Candidate(config, "grid"))
    return out


def wide_trees(m: int, n: int, k: int, procs: int, tma: bool) -> list[Candidate]:
    """Deterministic mode on atomic mode's measured tiles (``tuned.TABLE``) at
    high splits, reduced up fan-in 4 and 8 trees: where atomic mode wins by
    splitting K many ways, the wide tree keeps that split's reduction to a few
    hand-overs (128x128x32768: 32x64x128 swapped, split 16, 32, 64)."""
    entry = tuned.lookup(m, n, k, True)
    if entry is None:
        return []
    bm, bn, bk = entry.block_m, entry.block_n, entry.block_k
    tiles = -(-m // bm) * -(-n // bn)
    split = tuned.split_for(entry, tiles, procs)
    most = max(1, k // (MIN_K_STEPS * bk))
    splits = sorted({pow2_near(f * split) for f in FANIN_SPLITS})
    fields: dict[str, Any] = {"num_warps": entry.num_warps, "swap_ab": entry.swap_ab}
    if entry.num_stages is not None:
        fields["num_stages"] = entry.num_stages
    fields["tma"] = entry.tma and tma
    out = []
    for s in splits:
        if FANIN_MIN_SPLIT <= s <= most:
            for fanin in FANINS:
                config = make(m, n, k, bm, bn, bk, s, reduce="tree", fanin=fanin, **fields)
                out.append(Candidate(config, "grid"))
    return out


def scatters(m: int, n: int, k: int, procs: int, atomic: bool) -> list[Candidate]:
    """The reduce-scatter (``reduce=scatter``) on outputs of a few tiles, at the
    highest power-of-two split that keeps one program per SM (where it spins:
    :mod:`gemmreg_splitk.scatter`); in atomic mode as its fixed order. Where
    deterministic mode paid for its fixed order with one program summing the
    tile at the end (16x16x65536: 12.8 us up a fan-in 8 tree against 10.1 us
    for atomic adds at the same split, evidence/2026-12-01-h200-split-k-flat-shapes/c1/
    tune-small.log), every program of the tile sums a share of it instead."""
    out = []
    for bm in edges(m):
        for bn in edges(n):
            tiles = -(-m // bm) * -(-n // bn)
            if tiles > SCATTER_MAX_TILES or max(bm, bn) > 2 * min(bm, bn):
                continue
            warps = 2 if bm * bn <= 16 * 16 else 8 if bm * bn >= 128 * 128 else 4
            bk = 128  # stage 2 tries the others
            split = min(tuned.resident_split(tiles, procs), k // (MIN_K_STEPS * bk))
            if split < 2:
                continue
            for swap in (False, True) if swappable(bm, bn, False) else (False,):
                config = make(m, n, k, bm, bn, bk, split, num_warps=warps, swap_ab=swap,
                              reduce="scatter", fixed_order=atomic)  # fmt: skip
                out.append(Candidate(config, "grid"))
    return out
