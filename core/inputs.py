"""Input generation and layouts.

Inputs are drawn on the CPU from a seeded ``torch.Generator`` and then moved,
so one seed gives the same elements on every device. They are never all-ones
or zeros: such inputs hide wrong strides, and zeros run faster than real data
on power-limited GPUs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gemmreg.records import DType, InputGenerator, Problem

if TYPE_CHECKING:
    import torch


def torch_dtype(dtype: DType) -> torch.dtype:
    import torch

    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]


def normal_inputs(problem: Problem, seed: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Standard normal A and B: signed, so cancellation in C is exercised."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(problem.m, problem.k, generator=generator)
    b = torch.randn(problem.k, problem.n, generator=generator)
    dtype = torch_dtype(problem.dtype)
    return a.to(device=device, dtype=dtype), b.to(device=device, dtype=dtype)


def default_generator() -> InputGenerator:
    return normal_inputs


# Extra columns of padding for the ``padded`` layout: odd, so that row starts
# are not aligned to any power of two.
PAD = 3


def apply_layout(a: torch.Tensor, b: torch.Tensor, layout: str) -> tuple[torch.Tensor, ...]:
    """Return A and B with the same values, laid out in memory as ``layout`` says."""
    import torch

    def transposed(x: torch.Tensor) -> torch.Tensor:
        return x.t().contiguous().t()

    def padded(x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        wide = torch.empty(rows, cols + PAD, dtype=x.dtype, device=x.device)
        wide[:, cols:] = float("nan")  # poison: a kernel that reads the padding sees NaN
        wide[:, :cols] = x
        return wide[:, :cols]

    if layout == "rowmajor":
        return a.contiguous(), b.contiguous()
    if layout == "transposedA":
        return transposed(a), b.contiguous()
    if layout == "transposedB":
        return a.contiguous(), transposed(b)
    if layout == "padded":
        return padded(a), padded(b)
    raise ValueError(f"unknown layout {layout!r}")
