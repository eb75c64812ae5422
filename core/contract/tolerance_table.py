"""Standard tolerances: the figure that follows from a dtype and the math declared.

Every plugin declares how close counts as correct, for each dtype it runs.
Most kernels do one of a few kinds of arithmetic, and for those the bound
follows from the arithmetic and the output type alone. gemmreg keeps those
bounds here, each with where it comes from, so that a plugin declares its
tolerance by naming the standard for the precision it declares, in one line::

    tolerances=gemmreg.standard_tolerances(PRECISION)

The tolerance follows the declared math, never the dtype alone: a kernel that
declares ``tf32`` for fp32 is held to the TF32 bound, one that declares
``ieee_fp32`` to the IEEE one. A pair with no standard here (``fp16_acc16``,
say) is refused with the way out: declare a :class:`~gemmreg.Tolerance` of
your own, with its ``why`` where it is loose (:mod:`gemmreg.contract.tolerance_bounds`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from gemmreg.contract.declaration_checks import SpecError
from gemmreg.contract.records import DType, MathMode, Precision, Tolerance

_STANDARD: dict[tuple[DType, MathMode], Tolerance] = {
    ("fp32", "ieee_fp32"): Tolerance(
        rtol=3e-5,
        atol=1e-6,
        why="gemmreg's standard for IEEE fp32: rounding grows about like 2^-24*sqrt(K) "
        "of |A|@|B|, about 1.5e-5 at K = 65536 with all-positive inputs",
    ),
    ("fp32", "tf32"): Tolerance(
        rtol=4e-3,
        atol=1e-6,
        why="gemmreg's standard for TF32: 10 of fp32's 23 mantissa bits, so each product "
        "is off by up to ~2^-9 of |a||b| and the sum by that of |A|@|B|; 4e-3 leaves 2x margin",
    ),
    ("fp16", "fp16"): Tolerance(
        rtol=2e-3,
        atol=1e-3,
        why="gemmreg's standard for fp16 with an fp32 accumulator: exact products, "
        "then one rounding of C to fp16 (half an ulp is 2^-11)",
    ),
    ("bf16", "bf16"): Tolerance(
        rtol=1e-2,
        atol=1e-2,
        why="gemmreg's standard for bf16 with an fp32 accumulator: exact products, "
        "then one rounding of C to bf16 (half an ulp is 2^-8)",
    ),
    **{
        (fp8, "fp8"): Tolerance(
            rtol=3e-3,
            why="gemmreg's standard for fp8 with fp32 accumulation: products are exact, but "
            "Hopper's tensor cores keep about 13 bits of the partial sums between promotions "
            "to fp32: cuBLASLt without fast accumulation reached 1.4e-3 of |A|@|B| at K = 256, "
            "all-positive e4m3 inputs (evidence/2026-12-04-h200-lowp-rules); the core adds "
            "C's rounding to its output dtype",
        )
        for fp8 in ("fp8e4m3", "fp8e5m2")
    },
    ("int8", "int8"): Tolerance(
        rtol=0.0, why="gemmreg's standard for int8 with int32 accumulation: exact"
    ),
}
"""What :func:`standard_tolerances` reads. Private, and never handed out: the
public table below is a read-only copy, so no plugin's import can loosen the
standard every later plugin declares."""

STANDARD_TOLERANCES: Mapping[tuple[DType, MathMode], Tolerance] = MappingProxyType(dict(_STANDARD))
"""The standard tolerance for each (dtype, declared math) pair that has one.
The figures are the ones gemmreg's own IEEE, TF32, fp16 and bf16 kernels hold
to; all but TF32's and fp8's sit under
:data:`gemmreg.contract.tolerance_bounds.LOOSE_RTOL`, and those say why they are loose.
``fp8_fast_accum`` has none: summed without promotion, cuBLASLt's error grew
with K to 0.3 of |A|@|B| at K = 65536, so a kernel that runs it declares its own.
Read-only (a ``MappingProxyType``): assigning to it raises ``TypeError``."""


def standard_tolerances(precision: Mapping[Any, Precision]) -> dict[DType, Tolerance]:
    """The standard tolerance for each dtype of ``precision``, the mapping a
    plugin gives ``Capabilities(precision=...)`` (keyed by dtype names, as
    plain strings or typed as ``gemmreg.DType``: a Mapping's key type is
    invariant, so ``Any`` lets both through; unknown names are refused).

    :raises SpecError: For a dtype whose declared math has no standard.
    """
    tolerances: dict[DType, Tolerance] = {}
    for dtype, declared in precision.items():
        if not isinstance(declared, Precision):
            raise SpecError(
                f"standard_tolerances: {dtype}: {declared!r} is not a gemmreg.Precision"
            )
        standard = _STANDARD.get((dtype, declared.math))
        if standard is None:
            known = ", ".join(f"{d} with {m}" for d, m in _STANDARD)
            raise SpecError(
                f"standard_tolerances: no standard for {dtype} with {declared.math} math (there "
                f"is one for {known}); declare a gemmreg.Tolerance for it, with its why"
            )
        tolerances[dtype] = standard
    return tolerances
