"""The candidates ``tune.py`` sweeps and how they are picked for re-timing;
``tune_pool`` compiles them ahead, ``tune_report`` sums the results up."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import attrs
from gemmreg_splitk import heuristics, plugin, tuned

FILLS = (0.5, 1.0, 2.0, 3.0, 4.0)
"""Stage 1's splits: ``tiles x split`` about this many times the SM count."""
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
(evidence/2026-12-01-h200-session9/c3/flatcfg.json)."""
FANINS = (4, 8)
"""Deterministic mode's wide trees: split 32 in 3 or 2 hand-overs instead of 5."""
FANIN_MIN_SPLIT = 16
"""Wide trees only from this split up: below it the binary tree has <= 4 levels."""
FANIN_SPLITS = (0.5, 1.0, 2.0)
"""Stage 1 tries the wide trees on atomic mode's measured tiles at these
multiples of its split: atomic mode's split is what deterministic mode could
not afford with one program reading every partial."""


class Candidate(NamedTuple):
    config: heuristics.Config
    label: str
    """``current`` (what the plugin picks today), ``grid``, ``stage2``, ``retime``, ``broken``."""


def target(where: Any) -> heuristics.Target:
    """What the plugin chooses for here: the GPU's SM count, or the interpreter."""
    return plugin.target(where)


def key(c: heuristics.Config, atomic: bool) -> str:
    text = f"{c.block_m}x{c.block_n}x{c.block_k} split{c.split_k} w{c.num_warps} s{c.num_stages}"
    text += " swapAB" * c.swap_ab + " tma" * c.tma
    if atomic:
        return text + f" fixed-order {c.reduce}" * c.fixed_order
    return f"{text} {c.reduce}" + f"-f{c.fanin}" * (c.reduce == "tree" and c.fanin != 2)


def describe(cand: Candidate, m: int, n: int, k: int, atomic: bool) -> dict[str, Any]:
    c = cand.config
    return {
        "label": cand.label,
        "key": key(c, atomic),
        "config": attrs.asdict(c),
        "tiles": c.tiles(m, n),
        "programs": c.tiles(m, n) * c.split_k,
    }


def _pow2_near(x: float) -> int:
    return 1 if x <= 1 else 1 << round(math.log2(x))


def _make(
    m: int, n: int, k: int, bm: int, bn: int, bk: int, split: int, **fields: Any
) -> heuristics.Config:
    """A config like the plugin's (``heuristics._finish`` sizes stages and reduce chunks)."""
    return heuristics._finish(bm, bn, bk, split, k, 2, **fields)


def _dedup(cands: list[Candidate], atomic: bool) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for cand in cands:
        tag = key(cand.config, atomic) + cand.label * (cand.label == "broken")
        if tag not in seen:
            seen.add(tag)
            out.append(cand)
    return out


def stage1(m: int, n: int, k: int, atomic: bool, where: heuristics.Target, quick: bool,
           broken: bool, tma: bool = False) -> list[Candidate]:  # fmt: skip
    """The current choice first (always timed), then tiles x splits at default
    warps/stages; for the memory-bound classes, wide streaming tiles (``tma``:
    each also through TMA, where the TMA path runs)."""
    procs = where.processors
    current = heuristics.choose(m, n, k, where, atomic=atomic)
    cands = [Candidate(current, "current")]
    edges_m = [16] if quick else [e for e in EDGES if e <= max(16, 1 << (m - 1).bit_length())]
    edges_n = [16] if quick else [e for e in EDGES if e <= max(16, 1 << (n - 1).bit_length())]
    for bm in edges_m:
        for bn in edges_n:
            if max(bm, bn) > 2 * min(bm, bn) and not (m < n and bm >= m):
                continue  # thin tiles only for skinny outputs, where BLOCK_M covers M
            tiles = -(-m // bm) * -(-n // bn)
            few = tiles <= 4  # a handful of tiles: K steps matter more, try both
            bks = (32,) if quick else ((64, 128) if few else (128 if bm * bn <= 32 * 32 else 64,))
            fills = (1.0, 2.0) if quick else FILLS
            warps = 8 if bm * bn >= 128 * 128 else 4
            for bk in bks:
                most = max(1, k // (MIN_K_STEPS * bk))
                splits = sorted({min(most, _pow2_near(f * procs / tiles)) for f in fills})
                for split in splits:
                    for swap in (False, True) if _swappable(bm, bn, quick) else (False,):
                        config = _make(m, n, k, bm, bn, bk, split, num_warps=warps, swap_ab=swap)
                        cands.append(Candidate(config, "grid"))
    if quick and tma:  # the interpreter runs the TMA path too
        cands += [Candidate(attrs.evolve(c.config, tma=True), "grid") for c in cands[1:3]]
    if not quick and tuned.shape_class(m, n, k) in STREAMING_CLASSES:
        cands += _streaming(m, n, k, procs, tma)
        cands += _one_per_sm(m, n, k, procs) if tma else []
    if not quick and not atomic:
        cands += _wide_trees(m, n, k, procs, tma)
    if broken:
        base = next((c.config for c in cands if c.config.split_k >= 2), None)
        if base is not None:  # drops the last half of the K slices: C must come out wrong
            wrong = attrs.evolve(base, split_k=base.split_k // 2)
            cands.append(Candidate(wrong, "broken"))
    return _dedup(cands, atomic)


def _streaming(m: int, n: int, k: int, procs: int, tma: bool) -> list[Candidate]:
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
            for split in sorted(
                {min(most, _pow2_near(f * procs / tiles)) for f in STREAMING_FILLS}
            ):
                for with_tma in (False, True) if tma else (False,):
                    config = _make(m, n, k, bm, bn, bk, split, num_warps=STREAMING_WARPS,
                                   num_stages=stages, swap_ab=_swappable(bm, bn, False),
                                   tma=with_tma)  # fmt: skip
                    out.append(Candidate(config, "grid"))
    return out


def _one_per_sm(m: int, n: int, k: int, procs: int) -> list[Candidate]:
    """TMA tiles covering all of a flat problem's M, with splits that give
    about one program per SM, 4 warps, both launch orientations. On the H200
    a bare TMA main loop of this shape out-streamed every config of the grid
    above (64x4096x16384 fp16: 44.7 us with L2 flushed, against 47.4 us for
    torch.mm and about 48 us for the tuned split-K), and the plugin's own
    kernel in this shape ran at 0.99-1.03x torch.mm (one program per SM,
    64x64x128, split 2); a config one pipeline stage deeper or shallower
    could run 2.5x slower, so the tuner times each
    (evidence/2026-12-01-h200-session9: c2/stream.json, c3/flatcfg.json)."""
    bm = heuristics._edges(m, heuristics.MAX_BLOCK_M)[0]  # the widest M tile the plugin uses
    out = []
    for bn, bk in ONE_PER_SM_TILES:
        tiles = -(-m // bm) * -(-n // bn)
        split = min(max(1, k // (MIN_K_STEPS * bk)), _pow2_near(procs / tiles))
        fit = SMEM_LIMIT // ((bm + bn) * bk * 2)
        for stages in sorted({min(fit, s) for s in ONE_PER_SM_STAGES}):
            for swap in (False, True):
                config = _make(m, n, k, bm, bn, bk, split, num_warps=4, num_stages=stages,
                               swap_ab=swap, tma=True)  # fmt: skip
                out.append(Candidate(config, "grid"))
    return out


def _wide_trees(m: int, n: int, k: int, procs: int, tma: bool) -> list[Candidate]:
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
    splits = sorted({_pow2_near(f * split) for f in FANIN_SPLITS})
    fields: dict[str, Any] = {"num_warps": entry.num_warps, "swap_ab": entry.swap_ab}
    if entry.num_stages is not None:
        fields["num_stages"] = entry.num_stages
    fields["tma"] = entry.tma and tma
    out = []
    for s in splits:
        if FANIN_MIN_SPLIT <= s <= most:
            for fanin in FANINS:
                config = _make(m, n, k, bm, bn, bk, s, reduce="tree", fanin=fanin, **fields)
                out.append(Candidate(config, "grid"))
    return out


def _swappable(bm: int, bn: int, quick: bool) -> bool:
    """Worth launching as C^T = B^T A^T: the M tile is below wgmma's 64 rows and
    the N tile is not (quick: always, so the interpreter runs that path too)."""
    return quick or bm < 64 <= bn


def best(rows: list[dict[str, Any]], top: int) -> list[dict[str, Any]]:
    ok = [r for r in rows if r["status"] == "ok" and "broken" not in r["label"]]
    return sorted(ok, key=lambda r: -r["ratio"])[:top]


def _config(row: dict[str, Any]) -> heuristics.Config:
    return heuristics.Config(**row["config"])


def stage2(seeds: list[dict[str, Any]], m: int, n: int, k: int, atomic: bool,
           quick: bool, done: list[dict[str, Any]], tma: bool = False) -> list[Candidate]:  # fmt: skip
    """Around each seed: other BLOCK_K, warps, stages, the other reduction (and
    at high splits, or quick, the other tree fan-ins), the swapped launch where
    it applies, and (``tma``) the other load path."""
    out = []
    for row in seeds:
        c = _config(row)
        variants: list[dict[str, Any]] = []
        if not atomic:
            wide = FANINS if quick or c.split_k >= FANIN_MIN_SPLIT else ()
            trees = [f for f in (2, *wide) if c.reduce == "serial" or f != c.fanin]
            variants += [{"reduce": "tree", "fanin": f} for f in trees]
            if c.reduce == "tree":
                variants.append({"reduce": "serial", "fanin": 2})
        else:  # atomic mode may sum in deterministic mode's fixed order where that is faster
            variants.append({"fixed_order": not c.fixed_order, "reduce": "serial", "fanin": 2})
        if c.swap_ab or _swappable(c.block_m, c.block_n, quick):
            variants.append({"swap_ab": not c.swap_ab})
        if tma or c.tma:
            variants.append({"tma": not c.tma})
        if quick:
            variants.append({"num_stages": 2 if c.num_stages != 2 else 3})
        else:
            for bk in (32, 64, 128, 256):
                if bk != c.block_k and c.k_per_split >= MIN_K_STEPS * bk:
                    variants.append({"block_k": bk})
            variants += [{"num_warps": w} for w in (2, 4, 8) if w != c.num_warps]
            variants += [
                {"num_stages": s} for s in (c.num_stages - 1, c.num_stages + 1) if 2 <= s <= 6
            ]
        for change in variants:
            fields: dict[str, Any] = {
                "num_warps": c.num_warps,
                "num_stages": c.num_stages,
                "reduce": c.reduce,
                "swap_ab": c.swap_ab,
                "tma": c.tma,
                "fanin": c.fanin,
                "fixed_order": c.fixed_order,
            }
            fields.update(change)
            bk = fields.pop("block_k", c.block_k)
            if "block_k" in change:
                fields.pop("num_stages")  # sized for the new BLOCK_K
            config = _make(m, n, k, c.block_m, c.block_n, bk, c.split_k, **fields)
            if config.num_stages * (c.block_m + c.block_n) * bk * 2 > SMEM_LIMIT:
                continue
            out.append(Candidate(config, "stage2"))
    measured = {r["key"] for r in done}
    return [c for c in _dedup(out, atomic) if key(c.config, atomic) not in measured]


def retime(rows: list[dict[str, Any]], atomic: bool, top: int) -> list[Candidate]:
    """The first dtype's current choice, its best few, and the best of each
    reduction (each tree fan-in apart)."""
    keep = [r for r in rows if r["label"].startswith("current")] + best(rows, top)
    if not atomic:
        for reduce in sorted({_reduction(r["config"]) for r in rows}):
            keep += best([r for r in rows if _reduction(r["config"]) == reduce], 1)
    cands = [
        Candidate(_config(r), r["label"].replace("grid", "retime").replace("stage2", "retime"))
        for r in keep
    ]
    return _dedup(cands, atomic)


def _reduction(config: dict[str, Any]) -> tuple[str, int]:
    """(reduce, fan-in): the serial reduction has no fan-in (reports from before
    the field read as the binary tree)."""
    return config["reduce"], config.get("fanin", 2) if config["reduce"] == "tree" else 0
