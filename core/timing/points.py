"""The points of a timing run: shapes (from ``--shape`` or a ``--shapes``
file) x dtypes x layouts, each with its weight, decided before any work."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from gemmreg.contract.options import MAX_SWEEP_POINTS, UsageError
from gemmreg.contract.records import DType, Layout, Problem
from gemmreg.timing.shape_files import ShapeRow


@attrs.frozen
class Point:
    problem: Problem
    weight: float = 1.0


def points(
    shapes: Sequence[tuple[int, int, int]],
    rows: Sequence[ShapeRow],
    dtypes: Sequence[DType],
    layouts: Sequence[Layout],
) -> list[Point]:
    """``shapes`` for every dtype and layout (dtype outermost, as ``bench``
    always ordered them), then each file row in its order, with its own dtype
    and layout where it names one, else every one of ``dtypes`` and ``layouts``.
    At most :data:`MAX_SWEEP_POINTS`."""
    chosen = [
        Point(Problem(m=m, n=n, k=k, dtype=dtype, layout=layout))
        for dtype in dtypes
        for layout in layouts
        for m, n, k in shapes
    ]
    for row in rows:
        chosen += [
            Point(Problem(m=row.m, n=row.n, k=row.k, dtype=dtype, layout=layout), row.weight)
            for dtype in ([row.dtype] if row.dtype else dtypes)
            for layout in ([row.layout] if row.layout else layouts)
        ]
    if len(chosen) > MAX_SWEEP_POINTS:
        made = (
            f"{len(shapes)} shapes x {len(dtypes)} dtypes x {len(layouts)} layouts"
            if not rows
            else f"{len(rows)} rows of --shapes with {len(dtypes)} dtypes x {len(layouts)} layouts"
        )
        raise UsageError(
            f"{made} make {len(chosen)} points; bench takes at most {MAX_SWEEP_POINTS}"
        )
    return chosen
