"""The candidates ``tune.py`` sweeps and how they are picked for re-timing;
``tune_pool`` compiles them ahead, ``tune_report`` sums the results up."""

from __future__ import annotations

from typing import Any

import attrs
import tune_families
from gemmreg_splitk import heuristics, plugin, tuned
from tune_families import (
    FANIN_MIN_SPLIT,
    FANINS,
    MIN_K_STEPS,
    SMEM_LIMIT,
    STREAMING_CLASSES,
    Candidate,
    edges,
    make,
    pow2_near,
    swappable,
)

FILLS = (0.5, 1.0, 2.0, 3.0, 4.0)
"""Stage 1's splits: ``tiles x split`` about this many times the SM count."""


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
    edges_m = [16] if quick else edges(m)
    edges_n = [16] if quick else edges(n)
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
                splits = sorted({min(most, pow2_near(f * procs / tiles)) for f in fills})
                for split in splits:
                    for swap in (False, True) if swappable(bm, bn, quick) else (False,):
                        config = make(m, n, k, bm, bn, bk, split, num_warps=warps, swap_ab=swap)
                        cands.append(Candidate(config, "grid"))
    if quick and tma:  # the interpreter runs the TMA path too
        cands += [Candidate(attrs.evolve(c.config, tma=True), "grid") for c in cands[1:3]]
    if not quick and tuned.shape_class(m, n, k) in STREAMING_CLASSES:
        cands += tune_families.streaming(m, n, k, procs, tma)
        cands += tune_families.one_per_sm(m, n, k, procs) if tma else []
    if not quick and not atomic:
        cands += tune_families.wide_trees(m, n, k, procs, tma)
    if not quick:
        cands += tune_families.scatters(m, n, k, procs, atomic)
    if broken:
        base = next((c.config for c in cands if c.config.split_k >= 2), None)
        if base is not None:  # drops the last half of the K slices: C must come out wrong
            wrong = attrs.evolve(base, split_k=base.split_k // 2)
            cands.append(Candidate(wrong, "broken"))
    return _dedup(cands, atomic)


def best(rows: list[dict[str, Any]], top: int) -> list[dict[str, Any]]:
    ok = [r for r in rows if r["status"] == "ok" and "broken" not in r["label"]]
    return sorted(ok, key=lambda r: -r["ratio"])[:top]


def _config(row: dict[str, Any]) -> heuristics.Config:
    return heuristics.Config(**row["config"])


def stage2(seeds: list[dict[str, Any]], m: int, n: int, k: int, atomic: bool,
           quick: bool, done: list[dict[str, Any]], tma: bool = False) -> list[Candidate]:  # fmt: skip
    """Around each seed: other BLOCK_K, warps, stages (one shallower, one and two
    deeper, within ``SMEM_LIMIT``), the other reductions (and
    at high splits, or quick, the other tree fan-ins; atomic mode: atomic adds
    or either fixed order), the swapped launch where
    it applies, and (``tma``) the other load path."""
    out = []
    for row in seeds:
        c = _config(row)
        variants: list[dict[str, Any]] = []
        flat = ("serial", "scatter") if c.split_k > 1 else ("serial",)  # nothing to scatter
        if not atomic:
            wide = FANINS if quick or c.split_k >= FANIN_MIN_SPLIT else ()
            trees = [f for f in (2, *wide) if c.reduce != "tree" or f != c.fanin]
            variants += [{"reduce": "tree", "fanin": f} for f in trees]
            variants += [{"reduce": r, "fanin": 2} for r in flat if r != c.reduce]
        else:  # atomic mode may sum in deterministic mode's fixed order where that is faster
            if not c.fixed_order:
                variants += [{"fixed_order": True, "reduce": r, "fanin": 2} for r in flat]
            else:
                other = "serial" if c.reduce == "scatter" else "scatter"
                variants += [{"fixed_order": False, "reduce": "serial", "fanin": 2},
                             {"reduce": other, "fanin": 2}]  # fmt: skip
        if c.swap_ab or swappable(c.block_m, c.block_n, quick):
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
            # two deeper too: on the H200 the small shape's best (5 stages) was two
            # past its seed's 3 (evidence/2026-12-01-h200-split-k-reduce-scatter/c4/smallcfg.json)
            depths = (c.num_stages - 1, c.num_stages + 1, c.num_stages + 2)
            variants += [{"num_stages": s} for s in depths if 2 <= s <= 6]
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
            config = make(m, n, k, c.block_m, c.block_n, bk, c.split_k, **fields)
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
