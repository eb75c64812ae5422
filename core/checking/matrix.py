"""The correctness matrix: the cases the core runs against every plugin.

Cases come from the core, never from the plugin, and each one targets a bug
the seed write-ups name: shapes off the tile on each axis (a missing mask), K
below the tile and K = 1 (a K loop that assumes a full tile), degenerate and
skinny shapes, a single row with K past a tile (a GEMV path), a deep K beside
a small M and N (a split-K path), transposed and padded operands (strides,
not shapes, decide addresses), value distributions that expose wrong strides
and lost terms (never all-ones), several seeds, and on a GPU one case whose
element offsets pass 2^31 (int32 index arithmetic). A case outside a plugin's
declared capabilities is skipped with the reason, never failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, cast, get_args

import attrs
from gemmreg.checking import matrix_batched, matrix_grouped, matrix_low_precision
from gemmreg.contract.batching import form_label
from gemmreg.contract.inputs import DEFAULT_SEED
from gemmreg.contract.low_precision import is_low_precision
from gemmreg.contract.records import (
    BATCH_LAYOUTS,
    DTYPES,
    LAYOUTS,
    BatchLayout,
    DType,
    KernelSpec,
    Layout,
    OutDType,
    Problem,
    Scaling,
)

Level = Literal["quick", "full"]
LEVELS: tuple[Level, ...] = get_args(Level)

ValueKind = Literal["normal", "uniform", "mixed", "smallint", "nan", "plugin"]
"""How a case's inputs are drawn: ``normal`` (signed, so C cancels), ``uniform``
in [0, 1) (the seed's torch.rand), ``mixed`` magnitudes over several binades,
``smallint`` (integers in [-3, 3], exact in every dtype), ``nan`` (fp8 only:
``normal`` with a NaN in one row of A and one column of B), or ``plugin``
(the plugin's own generator)."""
VALUE_KINDS: tuple[ValueKind, ...] = get_args(ValueKind)

EXTRA_SEEDS = (1, 2)
"""Further seeds the full matrix runs the tail shapes with."""

SEED_EDGE_SHAPES: tuple[tuple[int, int, int], ...] = (
    (1, 1, 1),
    (3, 5, 7),
    (15, 17, 19),
    (17, 19, 23),
    (31, 33, 29),
)
"""The seed chapter's edge shapes (section 11.4), MxNxK."""

ALIGNED = 64
"""A size every common tile (16, 32, 64) divides, so one off-by-one axis is the only tail."""
TAIL = ALIGNED + 1

TAIL_SHAPES: tuple[tuple[int, int, int], ...] = (
    (ALIGNED, ALIGNED, ALIGNED),  # no tail at all: the control
    (TAIL, ALIGNED, ALIGNED),  # M tail only
    (ALIGNED, TAIL, ALIGNED),  # N tail only
    (ALIGNED, ALIGNED, TAIL),  # K tail only
    (TAIL, ALIGNED + 3, ALIGNED + 5),  # all three tails together
    (ALIGNED, ALIGNED, 7),  # K smaller than any tile
    (ALIGNED, ALIGNED, 1),  # K = 1
    (1, ALIGNED, 1),  # 1 x N x 1
    (1, ALIGNED + 3, ALIGNED + 5),  # 1 x N x K: a decode GEMV path, with N and K tails
    (ALIGNED, 1, ALIGNED),  # M x 1 x K
    (130, 70, 65),  # seed 003's tail-waste example
)
SKINNY_SHAPES: tuple[tuple[int, int, int], ...] = (
    (200, 8, 40),  # tall-skinny
    (8, 200, 40),  # short-wide
)
DEEP_K_SHAPE = (17, 19, 4133)
"""M and N inside one tile, K past 4096: the problem a split-K path takes
(too few output tiles to fill a GPU, a deep K), which no other shape here
reaches; K is prime, so no split count divides it and a split that drops
K's remainder loses columns. It costs the CPU about what the mid square does."""
FULL_EXTRA_SHAPES: tuple[tuple[int, int, int], ...] = (
    (1000, 16, 64),
    (16, 1000, 64),
    (257, 257, 257),
)
MID_SQUARE_GPU = 512
"""The seed's main shape, as the mid-size square on a GPU."""
MID_SQUARE_CPU = 128
"""The mid-size square on the CPU, where Triton's interpreter takes ~16 s at 512^3."""
GPU_MID_SHAPES: tuple[tuple[int, int, int], ...] = ((1000, 1000, 1000), (1024, 1024, 1024))

INT32_LIMIT = 2**31
LARGE_OFFSET_SHAPE = (65600, 64, 32768)
"""A has 65600 * 32768 > 2^31 elements, so its last rows sit past int32 offsets.
GPU only: A alone is 4.3 GB in fp16."""

LAYOUT_SHAPES = ((17, 19, 23), (TAIL, ALIGNED + 3, ALIGNED + 5), (31, 33, 29))
"""Shapes every non-default layout runs on: tails on all three axes."""
VALUE_SHAPES = ((17, 19, 23), (TAIL, ALIGNED + 3, ALIGNED + 5))
"""Shapes every non-default value kind runs on."""


@attrs.frozen(kw_only=True)
class Case:
    """One cell of the matrix: a problem, how its inputs are drawn, and the seed."""

    problem: Problem
    values: ValueKind = "normal"
    seed: int = DEFAULT_SEED
    gpu_only: bool = False

    def id(self, kernel: str) -> str:
        """``my_gemm-fp16-transposedB-17x19x23``, plus the values and seed
        where they are not the defaults (a batched case's: ``my_gemm-b3-fp16-...``)."""
        p = self.problem
        parts = [kernel, *filter(None, [form_label(p)]), p.number_format, p.layout, p.shape]
        if self.values != "normal":
            parts.append(self.values)
        if self.seed != DEFAULT_SEED:
            parts.append(f"seed{self.seed}")
        return "-".join(parts)


def _cases(
    shapes: Iterable[tuple[int, int, int]],
    dtypes: Iterable[DType],
    layouts: Iterable[Layout] = ("rowmajor",),
    values: Iterable[ValueKind] = ("normal",),
    seeds: Iterable[int] = (DEFAULT_SEED,),
) -> list[Case]:
    return [
        Case(problem=Problem(m=m, n=n, k=k, dtype=dtype, layout=layout), values=kind, seed=seed)
        for dtype in dtypes
        for layout in layouts
        for m, n, k in shapes
        for kind in values
        for seed in seeds
    ]


def build(
    level: Level,
    gpu: bool,
    dtypes: Sequence[DType] = DTYPES,
    layouts: Sequence[Layout] = LAYOUTS,
    outputs: Sequence[OutDType] = (),
    scalings: Sequence[Scaling] = (),
    batches: Sequence[int] = (1,),
    batch_layouts: Sequence[BatchLayout] = BATCH_LAYOUTS,
    grouped: bool = False,
) -> list[Case]:
    """The matrix at ``level``, before any plugin's capabilities are applied.

    ``quick`` runs in CI on the CPU under Triton's interpreter: every shape
    class in the default layout and values, every layout and value kind on
    tail shapes. ``full`` crosses shapes with layouts, adds seeds, larger
    shapes, and on a GPU the 2^31-offset case. The low-precision dtypes among
    ``dtypes`` get their own cases, in the fp8 output dtypes and scalings
    ``outputs`` and ``scalings`` name (empty: all of them):
    :mod:`gemmreg.checking.matrix_low_precision`. ``batches``: the batch sizes,
    1 for the cases above; each size above 1 adds the batched cases in the
    ``batch_layouts`` asked for (:mod:`gemmreg.checking.matrix_batched`).
    ``grouped``: the grouped cases too, last (:mod:`gemmreg.checking.matrix_grouped`).
    """
    plain = [d for d in dtypes if d in DTYPES]
    batched = matrix_batched.cases(level, plain, layouts, batches, batch_layouts)
    if grouped:
        batched += matrix_grouped.cases(level, plain, layouts)
    if 1 not in batches:
        return [Case(problem=problem, seed=seed) for problem, seed in batched]
    low = [dtype for dtype in dtypes if is_low_precision(dtype)]
    dtypes = [dtype for dtype in dtypes if not is_low_precision(dtype)]
    other_layouts: list[Layout] = [layout for layout in layouts if layout != "rowmajor"]
    default_layout: list[Layout] = ["rowmajor"] if "rowmajor" in layouts else []
    # fp8's own (``nan``): a 16- or 32-bit float is read by the hardware's
    # arithmetic, which keeps NaN, where fp8 is often decoded by hand
    other_values = [v for v in VALUE_KINDS if v not in ("normal", *matrix_low_precision.NAN_VALUES)]
    mid = MID_SQUARE_GPU if gpu else MID_SQUARE_CPU
    base_shapes = [*SEED_EDGE_SHAPES, *TAIL_SHAPES, *SKINNY_SHAPES, DEEP_K_SHAPE, (mid, mid, mid)]
    cases: list[Case] = []
    if level == "quick":
        cases += _cases(base_shapes, dtypes, default_layout)
        cases += _cases(LAYOUT_SHAPES, dtypes, other_layouts)
        cases += _cases(VALUE_SHAPES, dtypes, default_layout, other_values)
    else:
        shapes = [*base_shapes, *FULL_EXTRA_SHAPES, *(GPU_MID_SHAPES if gpu else ())]
        cases += _cases(shapes, dtypes, layouts)
        cases += _cases(VALUE_SHAPES, dtypes, layouts, other_values)
        cases += _cases(LAYOUT_SHAPES, dtypes, layouts, ("normal",), EXTRA_SEEDS)
        if gpu:
            cases += large_offset_cases(dtypes)
    if low:
        cells = matrix_low_precision.cases(level, gpu, low, layouts, outputs, scalings)
        cases += [
            Case(problem=problem, values=cast(ValueKind, kind), seed=seed)
            for problem, kind, seed in cells
        ]
    return cases + [Case(problem=problem, seed=seed) for problem, seed in batched]


def large_offset_cases(dtypes: Sequence[DType]) -> list[Case]:
    """One case per dtype in which A's element offsets pass 2^31."""
    m, n, k = LARGE_OFFSET_SHAPE
    assert m * k > INT32_LIMIT
    return [
        Case(problem=Problem(m=m, n=n, k=k, dtype=dtype), gpu_only=True)
        for dtype in dtypes
        if dtype in ("fp16", "fp32")
    ]


def refusal_problem(spec: KernelSpec) -> Problem | None:
    """A small problem just outside the declared dtypes or layouts, to check that
    the plugin refuses it with an error; None when it declares them all."""
    caps = spec.capabilities
    dtype = next(iter(sorted(caps.dtypes)))
    for other_dtype in DTYPES:
        if other_dtype not in caps.dtypes:
            return Problem(m=17, n=19, k=23, dtype=other_dtype)
    for layout in LAYOUTS:
        if layout not in caps.layouts:
            return Problem(m=17, n=19, k=23, dtype=dtype, layout=layout)
    return None


SANITIZE_TAIL_SHAPE = (TAIL, ALIGNED + 3, ALIGNED + 5)
"""Tails on all three axes: every mask and every partial tile is exercised."""
SANITIZE_SHORT_K_SHAPE = (TAIL, ALIGNED + 3, 7)
"""Tails on M and N, K below any tile: the first K tile is the partial one, so
shared memory a loader leaves unwritten holds what an earlier kernel left (a
later partial tile would see the same block's previous tile instead)."""
SANITIZE_MID_SHAPE = (256, 256, 256)
"""One mid size, small: the sanitizers slow kernels 10-100x."""
SANITIZE_ALIGNED_SHAPE = (TAIL, ALIGNED, ALIGNED)
"""For fp8 and int8 also: an M tail, N and K multiples of 16 (cuBLASLt's fp8
GEMM takes no other, and the shapes above have tails on every axis)."""


def sanitize_cases(
    dtypes: Sequence[DType] = DTYPES, layouts: Sequence[Layout] = LAYOUTS
) -> list[Case]:
    """The small subset the sanitizer pass runs: the all-tails shape in every
    layout and dtype; the short-K shape and the mid size in the default layout,
    every dtype (each dtype is its own compiled kernel, with its own shared
    memory layout, so one dtype would not stand for the others)."""
    default_layout: list[Layout] = ["rowmajor"] if "rowmajor" in layouts else []
    cases = _cases([SANITIZE_TAIL_SHAPE], dtypes, layouts)
    cases += _cases([SANITIZE_SHORT_K_SHAPE, SANITIZE_MID_SHAPE], dtypes, default_layout)
    low = [dtype for dtype in dtypes if is_low_precision(dtype)]
    cases += _cases([SANITIZE_ALIGNED_SHAPE], low, layouts)  # what cuBLASLt's fp8 GEMM takes
    return cases
