"""The low-precision problems: fp8 (e4m3, e5m2) inputs, scaled, with fp32
accumulation and a chosen output dtype; int8 inputs with int32 accumulation
and output.

What each input dtype allows (its output dtypes, its scalings, the one it
gets when none is named), the facts of each format the generators and the
checker use, and the spelling of a problem's number format in ids and
tables. A problem in fp32, fp16 or bf16 has its own dtype as its output and
no scaling, and is written, keyed and shown exactly as before these existed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import attrs
from gemmreg.contract.declaration_checks import SpecError
from gemmreg.contract.vocabulary import DTYPES, DType, OutDType, Scaling

if TYPE_CHECKING:
    import torch
    from gemmreg.contract.records import Problem

FP8_DTYPES: tuple[DType, ...] = ("fp8e4m3", "fp8e5m2")
FP8_OUT_DTYPES: tuple[OutDType, ...] = ("bf16", "fp16", "fp32")
"""What an fp8 GEMM may write (``torch._scaled_mm``'s ``out_dtype``)."""
FP8_SCALINGS: tuple[Scaling, ...] = ("tensor", "rowwise")

OUTPUTS: Mapping[str, tuple[OutDType, ...]] = {
    "fp32": ("fp32",),
    "fp16": ("fp16",),
    "bf16": ("bf16",),
    "fp8e4m3": FP8_OUT_DTYPES,
    "fp8e5m2": FP8_OUT_DTYPES,
    "int8": ("int32",),
}
"""The output dtypes each input dtype allows; the first is its default."""

SCALINGS_OF: Mapping[str, tuple[Scaling, ...]] = {
    "fp32": ("none",),
    "fp16": ("none",),
    "bf16": ("none",),
    "fp8e4m3": FP8_SCALINGS,
    "fp8e5m2": FP8_SCALINGS,
    "int8": ("none",),
}
"""The scalings each input dtype allows; the first is its default."""


def torch_dtype(dtype: DType | OutDType) -> torch.dtype:
    """The torch dtype of a gemmreg dtype name (an input's or an output's), so
    plugins never keep their own table."""
    import torch

    return {
        "fp32": torch.float32,
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
        "fp8e4m3": torch.float8_e4m3fn,
        "fp8e5m2": torch.float8_e5m2,
        "int8": torch.int8,
        "int32": torch.int32,
    }[dtype]


def default_out(dtype: DType) -> OutDType:
    """C's dtype when none is named: the input's own, bf16 for fp8, int32 for int8."""
    return OUTPUTS.get(dtype, ("fp32",))[0]


def default_scaling(dtype: DType) -> Scaling:
    """The scaling when none is named: per tensor for fp8, none otherwise."""
    return SCALINGS_OF.get(dtype, ("none",))[0]


def combination_error(dtype: str, out_dtype: str, scaling: str) -> str | None:
    """Why these three do not make a problem, or None."""
    outputs, scalings = OUTPUTS.get(dtype), SCALINGS_OF.get(dtype)
    if outputs is None or scalings is None:
        return None  # the dtype's own validator names it
    if out_dtype not in outputs:
        return f"{dtype} writes {', '.join(outputs)}, not {out_dtype!r}"
    if scaling not in scalings:
        return f"{dtype} is scaled {' or '.join(scalings)}, not {scaling!r}"
    return None


def settle(problem: Problem) -> None:
    """Called as a problem is made. Where its dtype fixes the output dtype and
    scaling (fp32, fp16, bf16, int8) they follow the dtype, whatever was given,
    so that ``attrs.evolve(problem, dtype="fp16")`` of an fp32 problem is an
    fp16 one as it always was; fp8's are choices, and a wrong one is refused."""
    dtype = problem.dtype
    outputs, scalings = OUTPUTS.get(dtype, ()), SCALINGS_OF.get(dtype, ())
    if len(outputs) == 1 and len(scalings) == 1:
        object.__setattr__(problem, "out_dtype", outputs[0])  # frozen: set as attrs would
        object.__setattr__(problem, "scaling", scalings[0])
        return
    error = combination_error(dtype, problem.out_dtype, problem.scaling)
    if error:
        raise SpecError(f"Problem: {error}")


def undeclared_fp8(
    problem: Problem, out_dtypes: Collection[str], scalings: Collection[str]
) -> str | None:
    """Why an fp8 problem is outside the declared outputs and scalings, or None."""
    if problem.out_dtype not in out_dtypes:
        declared = ", ".join(sorted(out_dtypes))
        return f"output dtype {problem.out_dtype} not declared (declares {declared})"
    if problem.scaling not in scalings:
        return f"scaling {problem.scaling} not declared (declares {', '.join(sorted(scalings))})"
    return None


def is_low_precision(dtype: str) -> bool:
    return dtype not in DTYPES


def fixed_by_dtype(problem: Problem) -> bool:
    """A problem's output dtype and scaling are left out of what is saved
    where its dtype fixes them: an fp32, fp16 or bf16 problem is written as
    before they existed, so saved runs and their keys read the same."""
    return not is_low_precision(problem.dtype)


def format_label(dtype: str, out_dtype: str, scaling: str) -> str:
    """A problem's number format as ids and tables spell it: the dtype alone
    where the dtype fixes the rest (fp32, fp16, bf16, int8), else
    ``fp8e4m3-bf16-rowwise`` (input, output, scaling)."""
    if len(OUTPUTS.get(dtype, ())) <= 1 and len(SCALINGS_OF.get(dtype, ())) <= 1:
        return dtype
    return f"{dtype}-{out_dtype}-{scaling}"


@attrs.frozen
class FormatFacts:
    """One element type's figures, as the generators and the checker use them."""

    largest: float
    """Its largest finite value."""
    smallest_subnormal: float
    """Its smallest positive value (0 for an integer type)."""
    unit_roundoff: float
    """Half an ulp relative to the value (0 for an integer type)."""
    smallest_normal_exponent: int = 0
    """log2 of its smallest normal value (0 for an integer type)."""


FACTS: Mapping[str, FormatFacts] = {
    "fp8e4m3": FormatFacts(448.0, 2.0**-9, 2.0**-4, -6),
    "fp8e5m2": FormatFacts(57344.0, 2.0**-16, 2.0**-3, -14),
    "int8": FormatFacts(127.0, 0.0, 0.0),
    "fp32": FormatFacts(3.4028234663852886e38, 2.0**-149, 2.0**-24, -126),
    "fp16": FormatFacts(65504.0, 2.0**-24, 2.0**-11, -14),
    "bf16": FormatFacts(3.3895313892515355e38, 2.0**-133, 2.0**-8, -126),
    "int32": FormatFacts(2.0**31 - 1, 0.0, 0.0),
}
"""``FACTS[name]``: the figures of each input and output element type."""
