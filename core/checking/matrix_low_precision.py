"""The correctness matrix's low-precision cases: fp8 (every output dtype and
scaling asked for) and int8, whose exact sum also runs at a K deep enough
for an inexact one to show.

Built only for the dtypes a check names (``--dtype fp8e4m3``), so a check of
fp32, fp16 and bf16 kernels is what it was. The shapes differ from the
16-bit matrix's on purpose: cuBLASLt's fp8 GEMM takes only K and N that are
multiples of 16, so most of these are aligned (the kernels that need that
run them), with one tail shape on every axis for the kernels that do not.
Every fp8 case has scales that are not powers of two, and every ``rowwise``
case a different scale on each row of A and column of B
(:mod:`gemmreg.contract.low_precision_inputs`): a kernel that ignores the
scales, or applies A's row scale by column, fails every one of them. fp8's
``nan`` cases hold a NaN in one row of A and one column of B: a kernel that
decodes e4m3 by hand and makes its NaN a number fails them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gemmreg.contract.inputs import DEFAULT_SEED
from gemmreg.contract.low_precision import OUTPUTS, SCALINGS_OF
from gemmreg.contract.records import DType, Layout, OutDType, Problem, Scaling

BASE_SHAPES: tuple[tuple[int, int, int], ...] = (
    (64, 64, 64),  # aligned: the control
    (65, 64, 64),  # M tail (cuBLASLt's fp8 GEMM takes any M)
    (48, 80, 32),  # aligned, M, N and K all different
    (17, 19, 23),  # tails on every axis, for kernels that take them
)
FULL_EXTRA_SHAPES: tuple[tuple[int, int, int], ...] = (
    (16, 16, 16),  # one 16-element tile
    (1, 16, 16),  # one row (int8's _int_mm needs M > 16: refused there)
    (200, 16, 48),  # tall-skinny
    (16, 208, 48),  # short-wide
    (64, 64, 1),  # K = 1
    (65, 67, 69),  # tails past a 64 tile on every axis
)
MID_SQUARE_GPU = 512
MID_SQUARE_CPU = 128
VALUE_SHAPES: tuple[tuple[int, int, int], ...] = ((64, 64, 64), (48, 80, 32))
"""Shapes every non-default value kind runs on (aligned, so every kernel runs them)."""
VALUE_LAYOUTS: tuple[Layout, ...] = ("rowmajor", "transposedB")
"""Layouts the value kinds run in: row-major, and A row-major with B column-major
(the one layout cuBLASLt's fp8 GEMM takes)."""
OTHER_VALUES = ("uniform", "mixed", "smallint")
NAN_VALUES = ("nan",)
"""What fp8 cases run beside :data:`OTHER_VALUES`: a NaN in one row of A and
one column of B (:mod:`gemmreg.contract.low_precision_inputs`), which C's row
and column must keep (e4m3 has no infinity; NaN is its one non-number)."""
EXACT_DEEP_K_SHAPE = (32, 32, 8192)
"""int8's exact sum checked where an inexact one shows: with ``uniform``
values (0 to 127, so C cannot cancel) a sum of 8192 products reaches about
2^25, past the 2^24 up to which fp32 holds every integer, so a kernel that
sums int8 products in fp32 (int8 through a float GEMM) rounds them; every
smaller shape here sums below 2^24, where fp32 is exact. M above 16, N and
K multiples of 8: what torch._int_mm takes on CUDA."""
EXTRA_SEEDS = (1, 2)
"""Further seeds the full matrix runs the value shapes with (the 16-bit matrix's)."""

Cell = tuple[Problem, str, int]
"""A case as :mod:`gemmreg.checking.matrix` makes it: its problem, value kind and seed
(that module imports this one, so it builds the ``Case`` records)."""


def formats(
    dtypes: Iterable[DType], outputs: Sequence[OutDType] = (), scalings: Sequence[Scaling] = ()
) -> list[tuple[DType, OutDType, Scaling]]:
    """Every (input, output, scaling) of ``dtypes`` that ``outputs`` and
    ``scalings`` allow (empty: all); an int8 problem's int32 output and no
    scaling are never filtered out."""
    chosen = []
    for dtype in dtypes:
        for out in OUTPUTS[dtype]:
            if outputs and len(OUTPUTS[dtype]) > 1 and out not in outputs:
                continue
            for scaling in SCALINGS_OF[dtype]:
                if scalings and len(SCALINGS_OF[dtype]) > 1 and scaling not in scalings:
                    continue
                chosen.append((dtype, out, scaling))
    return chosen


def cases(
    level: str,
    gpu: bool,
    dtypes: Iterable[DType],
    layouts: Sequence[Layout],
    outputs: Sequence[OutDType] = (),
    scalings: Sequence[Scaling] = (),
) -> list[Cell]:
    """The low-precision matrix at ``level`` for ``dtypes`` (low-precision ones only)."""
    mid = MID_SQUARE_GPU if gpu else MID_SQUARE_CPU
    shapes = [*BASE_SHAPES, (mid, mid, mid)]
    if level == "full":
        shapes += FULL_EXTRA_SHAPES
    value_layouts = [layout for layout in layouts if layout in VALUE_LAYOUTS]
    made: list[Cell] = []
    for number_format in formats(dtypes, outputs, scalings):
        made += _cases(number_format, shapes, layouts, ("normal",))
        made += _cases(number_format, VALUE_SHAPES, value_layouts, OTHER_VALUES)
        if number_format[0] == "int8":
            made += _cases(number_format, [EXACT_DEEP_K_SHAPE], value_layouts, ("uniform",))
        else:
            made += _cases(number_format, VALUE_SHAPES, value_layouts, NAN_VALUES)
        if level == "full":
            for seed in EXTRA_SEEDS:
                made += _cases(
                    number_format, VALUE_SHAPES, value_layouts, ("normal", "mixed"), seed
                )
    return made


def _cases(
    number_format: tuple[DType, OutDType, Scaling],
    shapes: Iterable[tuple[int, int, int]],
    layouts: Iterable[Layout],
    values: Iterable[str],
    seed: int = DEFAULT_SEED,
) -> list[Cell]:
    dtype, out, scaling = number_format
    return [
        (
            Problem(m=m, n=n, k=k, dtype=dtype, out_dtype=out, scaling=scaling, layout=layout),
            kind,
            seed,
        )
        for layout in layouts
        for m, n, k in shapes
        for kind in values
    ]
