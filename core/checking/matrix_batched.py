"""The correctness matrix's batched cases: C[i] = A[i] @ B[i], built only
for the batch sizes a check names above 1 (``--batch 1,3``), so a check that
names none is what it was.

Every item's inputs differ (each is drawn in turn from the seed), so a kernel
that computes one item for all of them, or takes one item's operands for
another's, fails. Every case runs in each batch layout asked for: ``packed``,
and ``strided``, whose batch stride exceeds an item's size with NaN in
between, so a kernel that computes an item's address from a packed stride
reads the wrong elements, or NaN. The shapes have tails on every axis (the
item's masks) and one is a single row and column (an item of one element).
"""

from __future__ import annotations

from collections.abc import Sequence

from gemmreg.contract.inputs import DEFAULT_SEED
from gemmreg.contract.records import BatchLayout, DType, Layout, Problem

BASE_SHAPES: tuple[tuple[int, int, int], ...] = ((17, 19, 23), (65, 67, 69))
"""Tails on every axis, small and past a 64 tile: in the default layout."""
LAYOUT_SHAPES: tuple[tuple[int, int, int], ...] = ((17, 19, 23),)
"""The shape every other layout runs on, item by item."""
FULL_EXTRA_SHAPES: tuple[tuple[int, int, int], ...] = ((1, 1, 1), (64, 64, 64), (64, 1, 7))
EXTRA_SEEDS = (1, 2)
"""Further seeds the full matrix runs the base shapes with."""

Cell = tuple[Problem, int]
"""A case as :mod:`gemmreg.checking.matrix` makes it: its problem and seed."""


def cases(
    level: str,
    dtypes: Sequence[DType],
    layouts: Sequence[Layout],
    batches: Sequence[int],
    batch_layouts: Sequence[BatchLayout],
) -> list[Cell]:
    """The batched cells of ``dtypes`` (fp32, fp16 and bf16 only: those are
    the dtypes a batched problem takes) for every batch above 1 in ``batches``."""
    shapes = [*BASE_SHAPES, *(FULL_EXTRA_SHAPES if level == "full" else ())]
    chosen: list[tuple[Layout, tuple[int, int, int], int]] = []
    if "rowmajor" in layouts:
        chosen += [("rowmajor", shape, DEFAULT_SEED) for shape in shapes]
        if level == "full":
            chosen += [("rowmajor", shape, seed) for shape in BASE_SHAPES for seed in EXTRA_SEEDS]
    chosen += [
        (layout, shape, DEFAULT_SEED)
        for layout in layouts
        if layout != "rowmajor"
        for shape in LAYOUT_SHAPES
    ]
    return [
        (
            Problem(
                m=m, n=n, k=k, dtype=dtype, layout=layout, batch=batch, batch_layout=batch_layout
            ),
            seed,
        )
        for batch in batches
        if batch > 1
        for dtype in dtypes
        for batch_layout in batch_layouts
        for layout, (m, n, k), seed in chosen
    ]
