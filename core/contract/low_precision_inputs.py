"""Inputs of the low-precision problems: fp8 operands with their scales, and
int8 operands.

The values use the format's range, not a corner of it: ``normal`` fills it
the way a quantiser does (amax near the largest value), ``uniform`` is
non-negative (C cannot cancel), ``smallint`` is exact everywhere, and
``mixed`` gives each row of A and each column of B a binade of its own,
cycling through every binade of the format, the subnormal ones and the one
holding the largest value included (which rows and columns hold exactly
plus and minus the largest value). A kernel that flushes subnormal inputs,
or saturates large ones, is wrong in whole rows of C, not in the noise.
``nan`` (fp8 only) is ``normal`` with one NaN in A, on the middle row at K's
last element, and one in B, in the last column at K's middle: e4m3 has no
infinity, so NaN is the one value outside its numbers, and a dequantiser
that decodes it by bit tricks or a table (as fast fp8-to-16-bit conversions
do) makes it a number. C's middle row and last column must be NaN.

Scales are never powers of two (a power of two is exact in any order of
multiplication, and would hide a scale applied twice or at the wrong point),
and per-row scales differ from row to row by up to 7x, so a row scale applied
as a column scale is wrong nearly everywhere. They bring the dequantised
values to order one, so C stays inside every output dtype's range.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from gemmreg.contract.low_precision import FACTS, torch_dtype
from gemmreg.contract.vocabulary import DType

if TYPE_CHECKING:
    import torch
    from gemmreg.contract.records import Problem

NORMAL_SPREAD = 4.0
"""``normal`` fp8 values are N(0, (largest / 4)^2), clamped: a quantiser's
amax at about four standard deviations, a few elements at the largest value."""
TENSOR_SCALE_RANGE = (0.55, 0.95)
"""A per-tensor scale's factor over the one that maps the largest value to
:data:`NORMAL_SPREAD`: drawn, so never a power of two in practice."""
ROW_SCALE_RANGE = (0.3, 2.1)
"""Per-row (per-column) factors: wide, so rows' scales differ by up to 7x."""
SMALLINT_RANGE = 3
NAN_FORMATS = ("fp8e4m3", "fp8e5m2")
"""The low-precision formats with a NaN (int8 has none)."""
INT8_RANGE = (-128, 127)


def low_precision_inputs(
    problem: Problem, seed: int, device: torch.device, kind: str
) -> tuple[torch.Tensor, ...]:
    """``(a, b)`` for int8, ``(a, b, scale_a, scale_b)`` for fp8, drawn on the
    CPU from ``seed`` and moved, contiguous and row-major: fresh tensors on
    every call (a kernel may write into its inputs)."""
    m, n, k = problem.mnk
    drawn = _draw(problem.dtype, m, n, k, problem.scaling, kind, seed)
    return tuple(x.to(device=device, copy=True) for x in drawn)


@functools.lru_cache(maxsize=1)
def _draw(
    dtype: DType, m: int, n: int, k: int, scaling: str, kind: str, seed: int
) -> tuple[torch.Tensor, ...]:
    """The CPU draw behind :func:`low_precision_inputs`, kept for the next
    caller as the 16-bit one is (:func:`gemmreg.contract.inputs.normal_inputs`):
    every kernel of a timing process draws the same seed, for its precheck
    and again for its checked call, and a large fp8 draw takes a second or
    more on a small host. Only the last draw is kept, in the format itself
    (one byte an element for fp8 and int8)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    if kind == "nan" and dtype not in NAN_FORMATS:
        raise ValueError(f"{dtype} has no NaN: no {kind!r} values")
    drawn = "normal" if kind == "nan" else kind
    a = _values(dtype, (m, k), drawn, generator, band_axis=0)
    b = _values(dtype, (k, n), drawn, generator, band_axis=1)
    if kind == "nan":
        a[m // 2, k - 1] = math.nan
        b[k // 2, n - 1] = math.nan
    operands = [x.to(dtype=torch_dtype(dtype)) for x in (a, b)]
    if scaling == "none":
        return tuple(operands)
    largest = FACTS[dtype].largest
    scale_a = _scales(scaling, (m, 1), largest, generator)
    scale_b = _scales(scaling, (1, n), largest, generator)
    return (*operands, scale_a, scale_b)


def _values(
    dtype: str, shape: tuple[int, int], kind: str, generator: torch.Generator, band_axis: int
) -> torch.Tensor:
    """Float32 (fp8) or int64 (int8) values exact in ``dtype`` once cast."""
    import torch

    if dtype == "int8":
        return _int8_values(shape, kind, generator, band_axis)
    facts = FACTS[dtype]
    largest = facts.largest
    if kind == "normal":
        x = torch.randn(shape, generator=generator) * (largest / NORMAL_SPREAD)
    elif kind == "uniform":
        x = torch.rand(shape, generator=generator) * largest
    elif kind == "smallint":
        x = torch.randint(-SMALLINT_RANGE, SMALLINT_RANGE + 1, shape, generator=generator).float()
    elif kind == "mixed":
        x = _every_binade(shape, facts.smallest_subnormal, largest, generator, band_axis)
    else:
        raise ValueError(f"unknown value kind {kind!r}")
    return x.clamp(-largest, largest)  # the cast to fp8 would make NaN (e4m3fn) or Inf past it


def _every_binade(
    shape: tuple[int, int],
    smallest: float,
    largest: float,
    generator: torch.Generator,
    band_axis: int,
) -> torch.Tensor:
    """Each row (``band_axis`` 0) or column (1) in a binade of its own, taken
    from both ends inwards (the smallest subnormal's, the largest value's,
    the next of each...), so that even a few rows reach both ends; in the
    rows of the top binade the first two elements are exactly +largest and
    -largest."""
    import torch

    low, high = round(math.log2(smallest)), math.floor(math.log2(largest))
    count = high - low + 1
    inwards = [low + i // 2 if i % 2 == 0 else high - i // 2 for i in range(count)]
    exponents = torch.tensor(inwards)[torch.arange(shape[band_axis]) % count]
    exponents = exponents.view(-1, 1) if band_axis == 0 else exponents.view(1, -1)
    sign = torch.randint(0, 2, shape, generator=generator) * 2 - 1
    mantissa = 1 + torch.rand(shape, generator=generator)
    x = sign * mantissa * torch.pow(2.0, exponents.float())
    top = (exponents == high).expand(shape)
    lines = top.nonzero()[:, band_axis].unique()
    other = shape[1 - band_axis]
    for line in lines.tolist():
        for offset, value in ((0, largest), (1, -largest)):
            if offset < other:
                where = (line, offset) if band_axis == 0 else (offset, line)
                x[where] = value
    return x


def _int8_values(
    shape: tuple[int, int], kind: str, generator: torch.Generator, band_axis: int
) -> torch.Tensor:
    import torch

    low, high = INT8_RANGE
    if kind == "normal":  # the whole range, -128 and 127 included
        return torch.randint(low, high + 1, shape, generator=generator)
    if kind == "uniform":
        return torch.randint(0, high + 1, shape, generator=generator)
    if kind == "smallint":
        return torch.randint(-SMALLINT_RANGE, SMALLINT_RANGE + 1, shape, generator=generator)
    if kind == "mixed":  # rows (columns) of magnitudes below 2^1 ... 2^7, cycling
        bits = torch.arange(shape[band_axis]) % 7 + 1
        bound = torch.pow(2, bits).view(-1, 1) if band_axis == 0 else torch.pow(2, bits).view(1, -1)
        x = torch.randint(low, high + 1, shape, generator=generator)
        x = torch.remainder(x, bound) * torch.where(
            torch.rand(shape, generator=generator) < 0.5, -1, 1
        )
        x.view(-1)[:2] = torch.tensor([low, high])
        return x
    raise ValueError(f"unknown value kind {kind!r}")


def _scales(
    scaling: str, shape: tuple[int, int], largest: float, generator: torch.Generator
) -> torch.Tensor:
    """fp32 scales: one (``tensor``, shaped (1, 1)) or one per row of A / column
    of B (``rowwise``), never a power of two."""
    import torch

    base = NORMAL_SPREAD / largest
    if scaling == "tensor":
        low, high = TENSOR_SCALE_RANGE
        shape = (1, 1)
    else:
        low, high = ROW_SCALE_RANGE
    factor = low + (high - low) * torch.rand(shape, generator=generator, dtype=torch.float64)
    scales = (factor * base).float()
    power_of_two = scales == torch.pow(2.0, torch.log2(scales).round())
    return torch.where(power_of_two, scales * 0.75, scales)
