"""The points of a timing run: shapes (from ``--shape`` or a ``--shapes``
file) x dtypes x layouts, each with its weight, decided before any work."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from gemmreg.contract import low_precision
from gemmreg.contract.declaration_checks import SpecError
from gemmreg.contract.options import MAX_SWEEP_POINTS, UsageError
from gemmreg.contract.records import BatchLayout, DType, Layout, OutDType, Problem, Scaling
from gemmreg.timing.shape_rows import ShapeRow


@attrs.frozen
class Point:
    problem: Problem
    weight: float = 1.0


def points(
    shapes: Sequence[tuple[int, int, int]],
    rows: Sequence[ShapeRow],
    dtypes: Sequence[DType],
    layouts: Sequence[Layout],
    out_dtype: OutDType | None = None,
    scaling: Scaling | None = None,
    batch: tuple[int, BatchLayout] = (1, "packed"),
    groups: tuple[int, ...] = (),
) -> list[Point]:
    """``shapes`` for every dtype and layout (dtype outermost, as ``bench``
    always ordered them), then each file row in its order, with its own dtype
    and layout where it names one, else every one of ``dtypes`` and ``layouts``.
    An fp8 point writes ``out_dtype`` and is scaled by ``scaling`` (a row's
    own where it names them; else the dtype's defaults: bf16, per tensor).
    Every point has ``batch``'s size and batch layout, a row's own where it
    names them. ``groups``: every shape's member sizes (grouped: its m their
    sum); a row's are its own. At most :data:`MAX_SWEEP_POINTS`."""
    fp8 = (out_dtype, scaling)
    chosen = [
        Point(_problem((m, n, k), dtype, layout, fp8, batch, groups))
        for dtype in dtypes
        for layout in layouts
        for m, n, k in shapes
    ]
    origins: list[ShapeRow | None] = [None] * len(chosen)
    for row in rows:
        own = (row.out_dtype or out_dtype, row.scaling or scaling)
        batched = (row.batch or batch[0], row.batch_layout or batch[1])
        row_points = [
            Point(
                _problem(row.shape, dtype, layout, own, batched, row.groups, row.where),
                row.weight,
            )
            for dtype in ([row.dtype] if row.dtype else dtypes)
            for layout in ([row.layout] if row.layout else layouts)
        ]
        chosen += row_points
        origins += [row] * len(row_points)
    if len(chosen) > MAX_SWEEP_POINTS:
        made = (
            f"{len(shapes)} shapes x {len(dtypes)} dtypes x {len(layouts)} layouts"
            if not rows
            else f"{len(rows)} rows of --shapes with {len(dtypes)} dtypes x {len(layouts)} layouts"
        )
        raise UsageError(
            f"{made} make {len(chosen)} points; bench takes at most {MAX_SWEEP_POINTS}"
        )
    _refuse_twice(chosen, origins)
    return chosen


def _refuse_twice(chosen: Sequence[Point], origins: Sequence[ShapeRow | None]) -> None:
    """Refuse two points of one label: they are one problem (a row without a
    dtype beside one naming it, ``16`` beside ``16x16x16``, a batch layout
    beside a batch of 1, which has none), which would be timed twice and
    saved as a run that ``report`` refuses."""
    seen: dict[str, int] = {}
    for index, point in enumerate(chosen):
        label = point.problem.label
        first = seen.setdefault(label, index)
        if first == index:
            continue
        before, row = origins[first], origins[index]
        if row is None or before is None:
            raise UsageError(f"the shapes make the point {label} twice: name each shape once")
        rows = (
            f"row {row.number} makes the point {label} twice"
            if row.number == before.number
            else f"rows {before.number} and {row.number} make the same point {label}"
        )
        raise UsageError(f"{row.source}: {rows}: keep one, with their weights added")


def _problem(
    shape: tuple[int, int, int],
    dtype: DType,
    layout: Layout,
    fp8: tuple[OutDType | None, Scaling | None],
    batch: tuple[int, BatchLayout] = (1, "packed"),
    groups: tuple[int, ...] = (),
    where: str = "",
) -> Problem:
    """The point's problem: an fp8 dtype takes ``fp8``'s output dtype and
    scaling (each None: its default); every other dtype has its own. A
    batched or grouped problem that cannot be (fp8, int8) is refused in one
    line, beginning with ``where`` (a shapes file's row) where given."""
    m, n, k = shape
    out_dtype, scaling = fp8
    size, batch_layout = batch
    try:
        if dtype not in low_precision.FP8_DTYPES:
            return Problem(
                m=m,
                n=n,
                k=k,
                dtype=dtype,
                layout=layout,
                batch=size,
                batch_layout=batch_layout,
                groups=groups,
            )
        return Problem(
            m=m,
            n=n,
            k=k,
            dtype=dtype,
            layout=layout,
            out_dtype=out_dtype or low_precision.default_out(dtype),
            scaling=scaling or low_precision.default_scaling(dtype),
            batch=size,
            batch_layout=batch_layout,
            groups=groups,
        )
    except SpecError as error:
        raise UsageError(f"{where}: {error}" if where else str(error)) from None
