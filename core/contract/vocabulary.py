"""The words of the contract: element types, layouts, backends, the math a
kernel declares, and the callables a plugin hands the core.

Here rather than in :mod:`gemmreg.contract.records` so that the records stay
one page a plugin author reads whole; ``records`` re-exports every name.
The low-precision half of the vocabulary (fp8 and int8 inputs, their output
dtypes and scalings) is :mod:`gemmreg.contract.low_precision`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    import torch
    from gemmreg.contract.records import Problem

DType = Literal["fp32", "fp16", "bf16", "fp8e4m3", "fp8e5m2", "int8"]
"""Element type of A and B. For fp32, fp16 and bf16, C has it too; for the
low-precision inputs (fp8 e4m3 and e5m2, int8) the problem names C's own
(:data:`OutDType`) and, for fp8, how the operands are scaled. The
accumulator is the plugin's business and is described by its declared
precision."""

DTYPES: tuple[DType, ...] = ("fp32", "fp16", "bf16")
"""The dtypes whose inputs and output share one type, in the order the
matrix and the tables use: what every command runs when no dtype is named."""

LOW_PRECISION_DTYPES: tuple[DType, ...] = ("fp8e4m3", "fp8e5m2", "int8")
"""The inputs whose output dtype differs from theirs (fp8: scaled, fp32
accumulation; int8: int32 accumulation and output). A command runs them
when they are named (``--dtype``, a shapes file's ``dtype``)."""

ALL_DTYPES: tuple[DType, ...] = get_args(DType)
"""Every :data:`DType`: :data:`DTYPES` then :data:`LOW_PRECISION_DTYPES`."""

OutDType = Literal["fp32", "fp16", "bf16", "int32"]
"""Element type of C."""

OUT_DTYPES: tuple[OutDType, ...] = get_args(OutDType)
"""Every :data:`OutDType`."""

Scaling = Literal["none", "tensor", "rowwise"]
"""How the fp8 operands are scaled before they are multiplied, as
``torch._scaled_mm`` takes scales: ``tensor``, one fp32 scale each for A and B
(shape ``(1, 1)``); ``rowwise``, one per row of A (``(m, 1)``) and one per
column of B (``(1, n)``); ``none`` for every other dtype. C = (scale_a * A) @
(B * scale_b), rounded once to C's dtype."""

SCALINGS: tuple[Scaling, ...] = get_args(Scaling)
"""Every :data:`Scaling`."""

ELEMENT_BYTES: dict[str, int] = {
    "fp32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8e4m3": 1,
    "fp8e5m2": 1,
    "int8": 1,
    "int32": 4,
}
"""Bytes per element of each :data:`DType` and :data:`OutDType`: what a
problem's operands take in memory and move through it."""

Layout = Literal["rowmajor", "transposedA", "transposedB", "padded"]
"""How A and B sit in memory. ``rowmajor``: both contiguous. ``transposedA`` /
``transposedB``: that operand is the transpose of a contiguous tensor (column
major). ``padded``: both are row-major views that start inside wider
buffers, at a non-zero storage offset, with poison before and after every
row, so the row stride exceeds the row length
(:func:`gemmreg.contract.inputs.apply_layout`). C is always a fresh
contiguous tensor."""

LAYOUTS: tuple[Layout, ...] = get_args(Layout)
"""Every :data:`Layout`, in the order the matrix and the tables use."""

BatchLayout = Literal["packed", "strided"]
"""Where the items of a batched problem's A and B sit (each item laid out as
its :data:`Layout` says). ``packed``: one contiguous 3-D tensor, item after
item, as ``torch.randn(batch, m, k)`` or ``x.view(batch, m, k)`` gives.
``strided``: each item starts a gap past the end of the one before it (a
batch stride above the item's size), as the views ``torch.bmm`` users meet
leave: every other item of a larger batch (``x[::2]``), one slot of a
buffer that holds more per item. The gaps hold NaN. C is always a fresh
contiguous (batch, m, n) tensor."""

BATCH_LAYOUTS: tuple[BatchLayout, ...] = get_args(BatchLayout)
"""Every :data:`BatchLayout`, in the order the matrix and the tables use."""

Backend = Literal["cuda", "rocm", "cpu"]
"""Where kernels run: an NVIDIA GPU through a CUDA build of torch, an AMD GPU
through a ROCm build, or the host CPU (Triton kernels under its interpreter)."""

BACKENDS: tuple[Backend, ...] = get_args(Backend)
"""Every :data:`Backend`: what ``Capabilities(backends=...)`` may name."""

Launch = Callable[..., None]
"""``launch(a, b, out)`` enqueues ``out = a @ b`` on the current stream and
returns (a batched problem's are 3-D: ``out[i] = a[i] @ b[i]``); for a scaled
problem (fp8) it is ``launch(a, b, out, scale_a, scale_b)``, the scales as
:data:`Scaling` shapes them; for a grouped one ``launch(a, b, out, offsets)``,
A and C its members' rows stacked, B (groups, k, n) and ``offsets`` int32,
groups + 1 row offsets (:mod:`gemmreg.contract.grouping`). It must not allocate, synchronise or compile: the
core times it."""

Prepare = Callable[["Problem"], Launch]
"""Called once per problem, outside any timed region. Compile, pick a
configuration, allocate workspaces here; return the launch closure."""

InputGenerator = Callable[["Problem", int, "torch.device"], "tuple[torch.Tensor, ...]"]
"""``make_inputs(problem, seed, device) -> (a, b)``: contiguous row-major A (m x k)
and B (k x n) of ``problem.dtype`` on ``device`` (a batched problem's: (batch, m, k)
and (batch, k, n), items that differ; a grouped problem's: (m, k), the members'
rows stacked, and (groups, k, n), the core adding the offsets); for a scaled problem
``(a, b, scale_a, scale_b)``, the fp32 scales shaped as :data:`Scaling` says.
The same seed must give the same values; the core lays A and B out as
``problem.layout`` (and ``problem.batch_layout``) asks."""

MathMode = Literal[
    "ieee_fp32",
    "tf32",
    "tf32x3",
    "fp16",
    "fp16_acc16",
    "bf16",
    "bf16x3",
    "fp64",
    "fp8",
    "fp8_fast_accum",
    "int8",
]
"""The arithmetic a kernel really performs, as a class the core can compare:

- ``ieee_fp32``: fp32 products and fp32 accumulation;
- ``tf32`` / ``tf32x3``: fp32 inputs rounded to TF32 (once, or split in three) on tensor cores;
- ``bf16x3``: fp32 inputs split into three bf16 parts;
- ``fp16`` / ``bf16``: 16-bit products, fp32 accumulation;
- ``fp16_acc16``: fp16 products and fp16 accumulation;
- ``fp64``: double precision throughout;
- ``fp8``: fp8 products (exact in fp32), summed in fp32 with the partial sums
  promoted to full fp32 as they grow (cuBLASLt without fast accumulation),
  the scales applied to the sum;
- ``fp8_fast_accum``: the same, summed inside the tensor cores without promotion;
- ``int8``: int8 products, summed exactly in int32.
"""

MATH_MODES: tuple[MathMode, ...] = get_args(MathMode)

Availability = Callable[[], "str | None"]
"""Returns ``None`` when the kernel can run on this machine, else the reason."""

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
