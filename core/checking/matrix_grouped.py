"""The correctness matrix's grouped cases: an MoE layer's grouped GEMM
(:mod:`gemmreg.contract.grouping`), built only when a check asks for them
(``--grouped``), so a check that names nothing is what it was.

The member sizes are what routing makes of a batch of tokens: uneven, with
empty members (an expert no token reached: first, between others, several
in a row, last) and one-row members. So a kernel that takes its rows from
the wrong member's offsets, lets an empty member touch the next member's
rows or skip the member after it, or multiplies every member by the first
member's B, fails. Every member's B differs (each is drawn in turn from the
seed). n and k have tails past a tile; the full level adds a single column
and depth, members past a 64-row tile, and further seeds.

Kernels that move tiles through TMA take only rows of a multiple of 16
bytes and fall back to a pointer path elsewhere, and may choose their
tiles by the members' typical rows: so one aligned n and k, with members
past a 128-row tile, runs in every layout, and every grouping runs at it
in the default layout.
"""

from __future__ import annotations

from collections.abc import Sequence

from gemmreg.contract.grouped_problems import grouped_problem
from gemmreg.contract.inputs import DEFAULT_SEED
from gemmreg.contract.records import DType, Layout, Problem

BASE_GROUPS: tuple[tuple[int, ...], ...] = ((0, 1, 17, 0, 33), (9, 1, 0, 0, 40, 0))
"""Empty first, between and last members, two empty in a row, one-row members, uneven sizes."""
FULL_EXTRA_GROUPS: tuple[tuple[int, ...], ...] = ((1,), (65, 0, 130, 1, 64), (1, 1, 1, 1))
"""One member alone, members past a 64-row tile, every member one row."""
WIDE_GROUPS: tuple[int, ...] = (130, 0, 65, 1, 200)
"""Members past a 128-row tile, most of them over 64 rows (a kernel's largest tiles)."""
BASE_NK: tuple[tuple[int, int], ...] = ((19, 23),)
ALIGNED_NK = (48, 80)
"""n and k of 16-element multiples, so rows of 16-byte multiples in every dtype
(what TMA takes), with tails past 32- and 64-wide tiles."""
FULL_EXTRA_NK: tuple[tuple[int, int], ...] = ((67, 69), (1, 1))
EXTRA_SEEDS = (1, 2)
"""Further seeds the full matrix runs the base groups with."""

Cell = tuple[Problem, int]
"""A case as :mod:`gemmreg.checking.matrix` makes it: its problem and seed."""


def cases(level: str, dtypes: Sequence[DType], layouts: Sequence[Layout]) -> list[Cell]:
    """The grouped cells of ``dtypes`` (fp32, fp16 and bf16 only: those are
    the dtypes a grouped problem takes) in ``layouts``: every grouping in the
    default layout, the first in every other layout; at :data:`ALIGNED_NK`,
    every grouping in the default layout, the wide one in every other."""
    full = level == "full"
    groupings = [*BASE_GROUPS, *(FULL_EXTRA_GROUPS if full else ())]
    shapes = [*BASE_NK, *(FULL_EXTRA_NK if full else ())]
    chosen: list[tuple[Layout, tuple[int, ...], tuple[int, int], int]] = []
    if "rowmajor" in layouts:
        chosen += [("rowmajor", g, nk, DEFAULT_SEED) for g in groupings for nk in shapes]
        if full:
            chosen += [("rowmajor", g, BASE_NK[0], s) for g in BASE_GROUPS for s in EXTRA_SEEDS]
        chosen += [("rowmajor", g, ALIGNED_NK, DEFAULT_SEED) for g in [*groupings, WIDE_GROUPS]]
    chosen += [
        (layout, groups, nk, DEFAULT_SEED)
        for layout in layouts
        if layout != "rowmajor"
        for groups, nk in ((BASE_GROUPS[0], BASE_NK[0]), (WIDE_GROUPS, ALIGNED_NK))
    ]
    return [
        (grouped_problem(groups, n, k, dtype=dtype, layout=layout), seed)
        for dtype in dtypes
        for layout, groups, (n, k), seed in chosen
    ]
