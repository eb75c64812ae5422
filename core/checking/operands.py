"""A kernel's operands for one problem and seed: drawn (the plugin's
generator or one of the matrix's value kinds), their shapes and dtypes
checked, and laid out as the problem says. The checker and the timing
protocol both hand kernels what this makes, so the strides a kernel is
timed on are the ones it was checked on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gemmreg.contract.grouping import offsets, operand_shapes
from gemmreg.contract.inputs import (
    apply_batch_layout,
    apply_layout,
    core_inputs,
    default_generator,
    torch_dtype,
)
from gemmreg.contract.records import KernelSpec, Problem

if TYPE_CHECKING:
    import torch


def make_operands(
    spec: KernelSpec, problem: Problem, seed: int, device: str, values: str = "plugin"
) -> tuple[torch.Tensor, ...]:
    """Inputs for this seed, laid out (and a batch's items placed) as the
    problem says: the plugin's own generator for ``values="plugin"``, else one
    of the matrix's value kinds.
    ``(a, b)``, for a scaled problem ``(a, b, scale_a, scale_b)``, and for a
    grouped one ``(a, b, offsets)``: the members' row offsets, which the core
    makes from the problem (:func:`gemmreg.contract.grouping.offsets`)."""
    import torch

    if values == "plugin":
        generate = spec.make_inputs or default_generator()
        operands = generate(problem, seed, torch.device(device))
    else:
        operands = core_inputs(problem, seed, torch.device(device), values)
    scaled = problem.scaling != "none"
    if len(operands) != (4 if scaled else 2):
        what = "a, b, scale_a, scale_b" if scaled else "a, b"
        raise ValueError(
            f"{spec.name}: make_inputs returned {len(operands)} tensors for "
            f"{problem.number_format}; expected ({what})"
        )
    a, b, *scales = operands
    expected = operand_shapes(problem)
    if (tuple(a.shape), tuple(b.shape)) != expected:
        raise ValueError(
            f"{spec.name}: make_inputs returned shapes {tuple(a.shape)}, {tuple(b.shape)}; "
            f"expected {expected[0]}, {expected[1]}"
        )
    if a.dtype != torch_dtype(problem.dtype) or b.dtype != torch_dtype(problem.dtype):
        raise ValueError(
            f"{spec.name}: make_inputs returned {a.dtype}/{b.dtype} for {problem.dtype}"
        )
    if scales:
        shapes = scale_shapes(problem)
        if [(tuple(x.shape), x.dtype) for x in scales] != [(s, torch.float32) for s in shapes]:
            raise ValueError(
                f"{spec.name}: make_inputs returned scales "
                f"{[(tuple(x.shape), x.dtype) for x in scales]}; expected fp32 of shapes {shapes}"
            )
    a, b = apply_layout(a, b, problem.layout)
    if problem.batch > 1:
        a, b = apply_batch_layout(a, b, problem.batch_layout)
    if problem.groups:
        return (a, b, offsets(problem, a.device))
    return (a, b, *scales)


def scale_shapes(problem: Problem) -> tuple[tuple[int, int], tuple[int, int]]:
    """The shapes of scale_a and scale_b: (1, 1) each, or (m, 1) and (1, n)."""
    if problem.scaling == "rowwise":
        return (problem.m, 1), (1, problem.n)
    return (1, 1), (1, 1)
