"""How the tiles and the split are chosen: pure functions of the shape and the
device, so that they are tested on the CPU.

The split fills the device: ``tiles x split`` programs, about
``PROGRAMS_PER_SM`` per multiprocessor. Two costs bound it from above. Each
K slice must stay long enough to be worth a program (``MIN_K_PER_SPLIT``).
In deterministic mode the last program of a tile reads back all ``split``
fp32 partials alone, so the bytes it reduces are kept below the bytes one
program loads (``MAX_REDUCE_TO_LOAD``): that reduction is on the critical
path of its tile. Atomic mode reduces in L2 as the partials arrive and only
has the contention cap ``MAX_SPLIT_K``. Among tile shapes, the one with the
most reuse (``BM x BN / (BM + BN)``: flops per operand byte) that fills the
device (``FILLED``) wins, with the fewest splits on ties; where none fills
it, the one that comes closest.

Shapes of a class with a measured entry (:mod:`gemmreg_splitk.tuned`, filled
from ``scripts/tune.py`` on a GPU) take that entry instead, its split scaled
to the device's multiprocessor count.
"""

from __future__ import annotations

import math
import os
from typing import Any

import attrs

from gemmreg_splitk import tuned

SPLIT_K_ENV = "GEMMREG_SPLITK_SPLIT_K"
"""Set to a positive integer to force SPLIT_K instead of choosing it from the shape."""
CONFIG_ENV = "GEMMREG_SPLITK_CONFIG"
"""Override chosen fields, e.g. ``block_m=32,block_n=128,num_stages=3``: tuning
on a GPU without editing the package. ``split_k`` here works like SPLIT_K_ENV;
``reduce=tree`` (or ``scatter``) picks deterministic mode's reduction, ``swap_ab=1`` the
transposed launch (C^T = B^T A^T), ``tma=1`` the TMA load path (Hopper),
``fanin=4`` the tree's fan-in (a power of two >= 2)."""
PROGRAMS_PER_SM = 2
"""Aim for this many programs per multiprocessor: one wave, two resident each."""
MIN_K_PER_SPLIT = 512
"""Each K slice spans at least this many elements of K on a GPU: enough
BLOCK_K steps for the software pipeline to run past its prologue."""
FILLED = 0.9
"""Programs at least this fraction of ``PROGRAMS_PER_SM x SMs`` fill the device."""
MAX_REDUCE_TO_LOAD = 1.0
"""Deterministic mode: a tile's fp32 partials (``split x BLOCK_M x BLOCK_N x 4``
bytes, read by one program) may be at most this many times the operand bytes
one program loads for its K slice."""
MAX_SPLIT_K = 256
"""Atomic mode: at most this many fp32 atomic adds land on one element of C."""
MAX_BLOCK_M = 64
MAX_BLOCK_N = 128
MIN_BLOCK = 16
"""tl.dot needs every tile edge to be at least 16."""
SMEM_BUDGET_BYTES = 100 * 1024
"""Shared memory for one program's pipelined A and B tiles, so two fit on an SM."""
MAX_STAGES = 4
MIN_STAGES = 2
REDUCE_VALUES_PER_THREAD = 64
"""Deterministic reduction: fp32 values one thread holds per chunk of partials
loaded at once (more chunks in flight hide L2 latency; more registers spill)."""
UNKNOWN_PROCESSORS = 108
"""Assumed where a GPU does not report its multiprocessor count (an A100's)."""
INTERPRETER_PROCESSORS = 4
"""Stands in for the multiprocessor count under Triton's interpreter."""
INTERPRETER_MIN_K_PER_SPLIT = 16
"""Under the interpreter nothing is filled or saved: tiny K slices make the
correctness matrix's small shapes run the split path (ragged last slice included)."""
INTERPRETER_BLOCK_K = 16


@attrs.frozen(kw_only=True)
class Target:
    """What the choice is made for: a GPU of ``processors`` SMs, or the interpreter."""

    processors: int
    min_k_per_split: int = MIN_K_PER_SPLIT
    max_reduce_to_load: float = MAX_REDUCE_TO_LOAD
    block_k: int | None = None
    """None: from the tile and the element size."""
    tuned: bool = True
    """Whether :data:`gemmreg_splitk.tuned.TABLE` applies (measured on GPUs only)."""


def gpu(processors: int) -> Target:
    return Target(processors=processors)


INTERPRETER = Target(
    processors=INTERPRETER_PROCESSORS,
    min_k_per_split=INTERPRETER_MIN_K_PER_SPLIT,
    max_reduce_to_load=math.inf,
    block_k=INTERPRETER_BLOCK_K,
    tuned=False,
)


@attrs.frozen(kw_only=True)
class Config:
    block_m: int
    block_n: int
    block_k: int
    split_k: int
    k_per_split: int
    """Elements of K each split sums: a multiple of ``block_k``; the last slice may be short."""
    num_warps: int = 4
    num_stages: int = 3
    reduce_chunk: int = 1
    """Deterministic mode: partials the last program loads at once (a power of two)."""
    reduce: str = attrs.field(default="serial", validator=attrs.validators.in_(tuned.REDUCTIONS))
    """Deterministic mode: ``serial`` (the last program sums every slot), ``tree``
    or ``scatter`` (see ``tuned.REDUCTIONS``)."""
    swap_ab: bool = False
    """Launch C^T = B^T A^T, so the MMA's M is N: on Hopper, wgmma (64 rows at least)
    instead of mma.sync for skinny-M tiles."""
    tma: bool = False
    """Load A and B through TMA descriptors (:mod:`gemmreg_splitk.tma`): Hopper or
    later and TMA-able strides only; elsewhere, and per call on other strides,
    the pointer path runs."""
    fanin: int = tuned.fanin_field()
    """``reduce=tree``: slices summed per tree node (a power of two >= 2), so
    ``ceil(log_fanin split)`` levels; 2 is the binary tree."""
    fixed_order: bool = False
    """Atomic mode only: sum the partials as deterministic mode does (``reduce``,
    through per-slice slots) instead of by atomic adds, where the GPU measured
    that faster. Atomic mode promises speed, not atomics; deterministic mode
    ignores the field (it always sums in a fixed order)."""

    def tiles(self, m: int, n: int) -> int:
        return -(-m // self.block_m) * -(-n // self.block_n)


def _edges(size: int, cap: int) -> list[int]:
    """Tile edges to try on one axis: the smallest power of two >= 16 that
    covers ``size`` (at most ``cap``), then halvings down to 16."""
    top = min(cap, max(MIN_BLOCK, tuned.pow2_ceil(size)))
    return [e for e in (128, 64, 32, 16) if e <= top]


def block_k_for(block_m: int, block_n: int, element_bytes: int, target: Target) -> int:
    """Longer K steps where the tile is small, so each step still moves enough bytes."""
    if target.block_k is not None:
        return target.block_k
    return 128 if block_m * block_n <= 32 * 32 and element_bytes <= 2 else 64


def split_for(
    block_m: int, block_n: int, m: int, n: int, k: int, block_k: int, atomic: bool,
    element_bytes: int, target: Target,
) -> int:  # fmt: skip
    """The wanted split (a power of two) for one tile shape, before rounding to K."""
    tiles = -(-m // block_m) * -(-n // block_n)
    wanted = tuned.pow2_floor(PROGRAMS_PER_SM * target.processors / tiles)
    by_k = tuned.pow2_floor(k / max(target.min_k_per_split, block_k))
    wanted = min(wanted, by_k)
    if atomic:
        return min(wanted, MAX_SPLIT_K)
    # split * BM * BN * 4 <= ratio * (k / split) * (BM + BN) * element_bytes
    bound = target.max_reduce_to_load * k * (block_m + block_n) * element_bytes
    if math.isfinite(bound):
        wanted = min(wanted, tuned.pow2_floor(math.sqrt(bound / (4 * block_m * block_n))))
    return wanted


def _finish(block_m: int, block_n: int, block_k: int, wanted: int, k: int, element_bytes: int,
            **fields: Any) -> Config:  # fmt: skip
    """Round the split to whole BLOCK_K steps (no empty slice) and size the pipeline."""
    k_blocks = max(1, -(-k // block_k))
    wanted = max(1, min(wanted, k_blocks))
    k_per_split = -(-k_blocks // wanted) * block_k
    split_k = max(1, -(-k // k_per_split))
    per_stage = (block_m + block_n) * block_k * element_bytes
    stages = max(MIN_STAGES, min(MAX_STAGES, SMEM_BUDGET_BYTES // per_stage))
    num_warps = fields.get("num_warps", 4)
    chunk = REDUCE_VALUES_PER_THREAD * 32 * num_warps // (block_m * block_n)
    chunk = max(1, min(tuned.pow2_floor(chunk), tuned.pow2_ceil(split_k)))
    values: dict[str, Any] = {
        "block_m": block_m,
        "block_n": block_n,
        "block_k": block_k,
        "split_k": split_k,
        "k_per_split": k_per_split,
        "num_warps": num_warps,
        "num_stages": stages,
        "reduce_chunk": chunk,
    }
    values.update(fields)
    return Config(**values)


def choose(
    m: int, n: int, k: int, target: Target, *, atomic: bool = False, element_bytes: int = 2
) -> Config:
    """Tiles and split for one problem: the measured entry of its shape class
    (:mod:`gemmreg_splitk.tuned`, the split scaled to the device's SMs) where
    there is one, else the heuristic; then what the environment forces."""
    overrides = _overrides()
    entry = tuned.lookup(m, n, k, atomic, element_bytes) if target.tuned else None
    fields: dict[str, Any] = {}
    if entry is not None:
        block_m, block_n, block_k = entry.block_m, entry.block_n, entry.block_k
        tiles = -(-m // block_m) * -(-n // block_n)
        split = tuned.split_for(entry, tiles, target.processors)
        fields = {
            "num_warps": entry.num_warps,
            "reduce": entry.reduce,
            "swap_ab": entry.swap_ab,
            "tma": entry.tma,
            "fanin": entry.fanin,
            "fixed_order": entry.fixed_order,
        }
        if entry.num_stages is not None:
            fields["num_stages"] = entry.num_stages
    else:
        block_m, block_n, block_k, split = _heuristic(m, n, k, target, atomic, element_bytes)
    block_m = overrides.pop("block_m", block_m)
    block_n = overrides.pop("block_n", block_n)
    block_k = overrides.pop("block_k", block_k)
    split = overrides.pop("split_k", split)
    fields.update(overrides)
    return _finish(block_m, block_n, block_k, split, k, element_bytes, **fields)


def _heuristic(
    m: int, n: int, k: int, target: Target, atomic: bool, element_bytes: int
) -> tuple[int, int, int, int]:
    """The tile with the most reuse that fills the device, fewest splits on
    ties; where none fills it, the closest to filling it."""
    target_programs = PROGRAMS_PER_SM * target.processors
    best: tuple[tuple[float, float, float, float], int, int, int, int] | None = None
    for block_m in _edges(m, MAX_BLOCK_M):
        for block_n in _edges(n, MAX_BLOCK_N):
            block_k = block_k_for(block_m, block_n, element_bytes, target)
            split = split_for(block_m, block_n, m, n, k, block_k, atomic, element_bytes, target)
            tiles = -(-m // block_m) * -(-n // block_n)
            programs = tiles * split
            reuse = block_m * block_n / (block_m + block_n)
            rank: tuple[float, float, float, float]
            if programs >= FILLED * target_programs:
                rank = (1.0, reuse, -split, 0.0)
            else:
                rank = (0.0, float(programs), reuse, float(-split))
            if best is None or rank > best[0]:
                best = (rank, block_m, block_n, block_k, split)
    assert best is not None
    return best[1:]


def _overrides() -> dict[str, Any]:
    """The fields the environment forces (SPLIT_K_ENV, CONFIG_ENV), checked."""
    out: dict[str, Any] = {}
    forced = os.environ.get(SPLIT_K_ENV, "").strip()
    if forced:
        out["split_k"] = _positive(SPLIT_K_ENV, forced)
    text = os.environ.get(CONFIG_ENV, "").strip()
    allowed = {"block_m", "block_n", "block_k", "split_k", "num_warps", "num_stages", "reduce"}
    allowed |= {"swap_ab", "tma", "fanin", "fixed_order"}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in allowed:
            raise ValueError(f"{CONFIG_ENV}: unknown field {key!r}; known: {sorted(allowed)}")
        if key == "reduce":
            if value.strip() not in tuned.REDUCTIONS:
                raise ValueError(f"{CONFIG_ENV} reduce must be one of {list(tuned.REDUCTIONS)}")
            out[key] = value.strip()
            continue
        if key in ("swap_ab", "tma", "fixed_order"):
            if value.strip() not in ("0", "1"):
                raise ValueError(f"{CONFIG_ENV} {key} must be 0 or 1")
            out[key] = value.strip() == "1"
            continue
        if key == "fanin":
            fanin = int(value.strip()) if value.strip().isdigit() else value.strip()
            if not tuned.is_fanin(fanin):
                raise ValueError(f"{CONFIG_ENV} fanin must be a power of two >= 2, got {value!r}")
            out[key] = fanin
            continue
        out[key] = _positive(f"{CONFIG_ENV} {key}", value.strip())
    for key in ("block_m", "block_n", "block_k"):
        if key in out and (out[key] < MIN_BLOCK or out[key] & (out[key] - 1)):
            raise ValueError(f"{CONFIG_ENV} {key} must be a power of two >= {MIN_BLOCK}")
    return out


def _positive(name: str, text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{name} must be a positive integer, got {text!r}")
    return int(text)
