"""Per-shape-class configs measured on a GPU, and how the split follows from
the multiprocessor count.

A tuned entry never stores SPLIT_K itself: it stores how many programs per
multiprocessor the measured best config ran (``programs_per_sm``), so the
split follows the device it runs on (read from the device at ``prepare``):
``split = tiles x split ~= programs_per_sm x SMs``. The entries below are
what the heuristic of :mod:`gemmreg_splitk.heuristics` picks on an H200
(132 SMs), written out; ``scripts/tune.py`` prints entries in this form for
the best config it measures per shape and mode, to paste here.

A shape falls in the first class whose bounds it meets; shapes in no class
(and everything under Triton's interpreter) keep the heuristic.
"""

from __future__ import annotations

import math

import attrs

REDUCTIONS = ("serial", "tree", "scatter")
"""Deterministic mode's reductions (:mod:`gemmreg_splitk.kernel`): the last
program of a tile sums every slot (``serial``), groups of ``fanin`` K
slices sum up a fixed tree (``tree``), or every program of the tile sums a
share of it (``scatter``). Atomic mode ignores it unless its entry sets
``fixed_order``."""


def is_fanin(value: object) -> bool:
    """A tree fan-in: a power of two, at least 2."""
    return type(value) is int and value >= 2 and value & (value - 1) == 0


def _check_fanin(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if not is_fanin(value):
        raise ValueError(f"{attribute.name} must be a power of two >= 2, got {value!r}")


def tree_levels(split: int, fanin: int) -> int:
    """``ceil(log_fanin(split))``, in integers: the tree reduction's levels."""
    levels, span = 0, 1
    while span < split:
        levels, span = levels + 1, span * fanin
    return levels


def fanin_field() -> int:
    """The tree's fan-in (``reduce=tree`` only): its levels are ``ceil(log_fanin split)``."""
    return attrs.field(default=2, validator=_check_fanin)


@attrs.frozen(kw_only=True)
class ShapeClass:
    """Problems with ``m <= max_m``, ``min_n <= n <= max_n`` and ``k >= min_k``."""

    name: str
    max_m: int
    max_n: int = 1 << 62
    min_n: int = 1
    min_k: int = 1

    def holds(self, m: int, n: int, k: int) -> bool:
        return m <= self.max_m and self.min_n <= n <= self.max_n and k >= self.min_k


@attrs.frozen(kw_only=True)
class Tuned:
    """One measured config, with the split as programs per multiprocessor."""

    block_m: int
    block_n: int
    block_k: int
    programs_per_sm: float
    num_warps: int = 4
    num_stages: int | None = None
    """None: as many as the shared-memory budget allows (the heuristic's sizing)."""
    reduce: str = attrs.field(default="serial", validator=attrs.validators.in_(REDUCTIONS))
    swap_ab: bool = False
    """Launch C^T = B^T A^T (see ``heuristics.Config.swap_ab``)."""
    tma: bool = False
    """Load A and B through TMA (see ``heuristics.Config.tma``)."""
    fanin: int = fanin_field()
    """The tree reduction's fan-in (see ``heuristics.Config.fanin``)."""
    fixed_order: bool = False
    """Atomic mode sums in a fixed order here (see ``heuristics.Config.fixed_order``)."""


CLASSES = (
    ShapeClass(name="tiny", max_m=32, max_n=32, min_k=8192),  # 16x16x65536
    ShapeClass(name="small", max_m=256, max_n=256, min_k=8192),  # 128x128x32768
    ShapeClass(name="flat32", max_m=32, min_n=1024, min_k=4096),  # 32x8192x8192
    ShapeClass(name="flat64", max_m=64, min_n=1024, min_k=4096),  # 64x4096x16384
)
"""First match wins, so the narrower classes come first."""

TABLE: dict[tuple[str, bool], Tuned] = {
    # (class, atomic). tiny and small: scripts/tune.py with L2 flushed before every sample,
    # as gemmreg times (evidence/2026-11-30-h200-tf32-routes/README.md). Earlier picks made
    # with a warm L2 had lost there under `gemmreg bench` (atomic 1.38 -> 1.17x and 0.92 -> 0.57x).
    # Deterministic tiny and small: the reduce-scatter (reduce="scatter"), measured on the
    # H200 in December 2026 (evidence/2026-12-01-h200-split-k-reduce-scatter/c1/tune-small.log): every program
    # of a tile sums a share of it, one program per SM. It replaces the earlier fan-in trees
    # (0.935-0.965x and 0.859-0.862x torch.mm in the same run), where one program summed the tile
    # at the end. The figures below are the tuner's, with the scatter's first form; waiting on
    # the count itself (cd7cba8), `gemmreg bench` gives 1.33-1.34x and 1.05-1.08x (c9, c10).
    # Atomic mode at small sums the same way (fixed_order): 1.022x/1.007x there against
    # 1.010x/0.999x by atomic adds (fp16/bf16). Small has 4 stages, the tuner's pick:
    # 5 shipped first (1.035x/1.016x against 1.020x/0.993x with L2 flushed, c4/smallcfg.json
    # beside that c1), but an interleaved device-kernel profile put 5 stages at
    # 0.968-0.978x cuBLAS in bf16 against 0.999-1.003x for 4; end to end both were FASTER
    # (`gemmreg bench`, two runs each, alternated; evidence/2026-12-01-h200-device-kernel-figures/p8).
    ("tiny", False): Tuned(
        block_m=16,
        block_n=16,
        block_k=128,
        programs_per_sm=0.97,
        num_warps=2,
        num_stages=4,
        reduce="scatter",
    ),  # 16x16x65536 splitk: 1.230x torch.mm (geomean over 2 dtypes; the c1 tuning above)
    ("tiny", True): Tuned(
        block_m=16, block_n=16, block_k=128, programs_per_sm=0.97, num_warps=2, num_stages=4
    ),  # 16x16x65536 splitk_atomic: 1.375x torch.mm (geomean over 2 dtypes)
    ("small", False): Tuned(
        block_m=64,
        block_n=64,
        block_k=128,
        programs_per_sm=0.97,
        num_warps=4,
        num_stages=4,
        reduce="scatter",
    ),  # 128x128x32768 splitk: 1.061-1.077x torch.mm end to end (the p8 runs above)
    ("small", True): Tuned(
        block_m=64,
        block_n=64,
        block_k=128,
        programs_per_sm=0.97,
        num_warps=4,
        num_stages=4,
        reduce="scatter",
        fixed_order=True,
    ),  # 128x128x32768 splitk_atomic: deterministic mode's entry, in its fixed order
    # flat64 and flat32: scripts/tune.py with L2 flushed, its grid with the one-program-
    # per-SM TMA family (evidence/2026-12-01-h200-split-k-flat-shapes/c4/tune-flat.log; the "current"
    # column there is the entries before it, 0.953-0.988x): a tile covering all of M and
    # about one program per SM streams B faster than four smaller programs per SM did.
    # Both flat64 entries have 4 stages, not 5 (evidence/2026-12-02-h200-host-bound-batches):
    # the tuner under gemmreg's read flush (r1/tune-flat) put 64x64x128 split 2 TMA at
    # 1.060x/1.079x torch.mm (fp16/bf16) with 4 stages, and the same call replayed from a
    # graph behind a flush (r2/skmodes) ran 38.10/37.92 us with 4 stages against 38.61/40.65
    # us with 5 (cuBLAS 38.8-39.5 us).
    ("flat64", False): Tuned(
        block_m=64,
        block_n=64,
        block_k=128,
        programs_per_sm=0.97,
        num_warps=4,
        num_stages=4,
        reduce="serial",
        tma=True,
    ),  # 64x4096x16384 splitk: 1.060-1.079x torch.mm (the tuner run r1 above)
    # Atomic mode at flat64 sums in the fixed order: in the same tuner run this config
    # gave 1.020x/1.023x torch.mm that way (the splitk rows) and 0.991x/0.992x by atomic
    # adds (fp16/bf16), and gemmreg bench agreed (c5, c6: 1.014-1.016x against 0.981-0.985x).
    ("flat64", True): Tuned(
        block_m=64,
        block_n=64,
        block_k=128,
        programs_per_sm=0.97,
        num_warps=4,
        num_stages=4,
        reduce="serial",
        tma=True,
        fixed_order=True,
    ),  # 64x4096x16384 splitk_atomic: deterministic mode's entry, in its fixed order
    ("flat32", False): Tuned(
        block_m=32,
        block_n=64,
        block_k=128,
        programs_per_sm=0.97,
        num_warps=4,
        num_stages=5,
        reduce="serial",
        swap_ab=True,
    ),  # 32x8192x8192 splitk: 1.000x torch.mm (geomean over 2 dtypes; split 1 on an H200)
    ("flat32", True): Tuned(
        block_m=32,
        block_n=64,
        block_k=128,
        programs_per_sm=0.97,
        num_warps=4,
        num_stages=5,
        swap_ab=True,
    ),  # 32x8192x8192 splitk_atomic: 0.999x torch.mm (geomean over 2 dtypes; split 1 on an H200)
}


def shape_class(m: int, n: int, k: int) -> str | None:
    for candidate in CLASSES:
        if candidate.holds(m, n, k):
            return candidate.name
    return None


MEASURED_ELEMENT_BYTES = 2
"""The entries are measured in fp16 and bf16; fp32 inputs keep the heuristic."""


def lookup(m: int, n: int, k: int, atomic: bool, element_bytes: int = 2) -> Tuned | None:
    if element_bytes != MEASURED_ELEMENT_BYTES:
        return None
    name = shape_class(m, n, k)
    return None if name is None else TABLE.get((name, atomic))


def split_for(entry: Tuned, tiles: int, processors: int) -> int:
    """The power of two nearest (in log scale) to ``programs_per_sm x SMs / tiles``:
    powers of two keep K's slices whole on the power-of-two K of the target shapes.
    The reduce-scatter's split rounds down instead, to at most one program per
    SM: only then does it spin (its measured entries are one program per SM;
    a GPU with 108 SMs would round 0.97 x 108 up to 128, where the last program
    would sum every share alone, several times slower)."""
    wanted = entry.programs_per_sm * processors / max(1, tiles)
    if entry.reduce == "scatter":
        return min(resident_split(tiles, processors), pow2_floor(wanted))
    if wanted <= 1:
        return 1
    return 1 << round(math.log2(wanted))


def resident_split(tiles: int, processors: int) -> int:
    """The highest power-of-two split with ``tiles x split`` at most one
    program per SM (1 where the tiles alone outnumber the SMs): the
    reduce-scatter spins only then."""
    return pow2_floor(processors / max(1, tiles))


def pow2_floor(x: float) -> int:
    """The highest power of two at most ``x`` (1 below 1); the heuristic's too."""
    return 1 << math.floor(math.log2(x)) if x >= 1 else 1


def pow2_ceil(x: int) -> int:
    """The lowest power of two at least ``x`` (1 below 1)."""
    return 1 << max(0, (x - 1).bit_length())


def programs_per_sm(tiles: int, split_k: int, processors: int) -> float:
    """The figure a measured config is stored with (rounded for the table)."""
    return round(tiles * split_k / processors, 3)
