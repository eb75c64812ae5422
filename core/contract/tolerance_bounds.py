"""How close counts as correct (:class:`Tolerance`), and how loose a declared
tolerance may be before it must say why.

A tolerance is the one figure a plugin could bend to pass: the bound here
makes a loose one visible, with its reason, in the declaration itself.
:mod:`gemmreg.contract.records` imports this module and re-exports :class:`Tolerance`
(plugins write ``gemmreg.Tolerance``), so nothing here imports records at
run time: a declaration is checked without an import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs
from gemmreg.contract.declaration_checks import _fail, _non_negative_float

if TYPE_CHECKING:
    from gemmreg.contract.records import DType, KernelSpec

LOOSE_RTOL: Mapping[DType, float] = {
    "fp32": 1e-4,
    "fp16": 1e-2,
    "bf16": 2e-2,
    "fp8e4m3": 1e-4,
    "fp8e5m2": 1e-4,
    "int8": 0.0,
}
"""Above these bounds (in units of |A|@|B|) a tolerance is loose for its dtype,
and the declaration must say why. They sit a little above what a K=4096 dot
product accumulated in fp32 typically reaches for each input type (fp8's
products are exact in fp32, so its bound is fp32's; int8's sum in int32 is
exact, so any tolerance at all says why). Every dtype has one, so a dtype
with no bound here is unknown."""

LOOSE_ATOL: Mapping[DType, float] = {
    "fp32": 1e-5,
    "fp16": 1e-2,
    "bf16": 1e-1,
    "fp8e4m3": 0.0,
    "fp8e5m2": 0.0,
    "int8": 0.0,
}
"""Above these bounds (in C's units) an absolute tolerance is loose for its
dtype, and the declaration must say why: ten times the standard atol
(:data:`gemmreg.contract.tolerance_table.STANDARD_TOLERANCES`: 1e-6 for fp32,
1e-3 for fp16, 1e-2 for bf16). atol is added to every element's bound
whatever its size, so an unbounded one passes any output (``atol=1e30``
passed random numbers); the standards for fp8 and int8 have none (the core
adds C's rounding itself), so any atol there says why."""


@attrs.frozen(kw_only=True)
class Tolerance:
    """How close counts as correct, for one dtype.

    An element of C passes when ``|C - ref| <= atol + rtol * (|A| @ |B|)``, with
    ``ref`` computed in float64 from the same, already-cast inputs. Scaling by
    ``|A| @ |B|`` (rather than by ``|ref|``) keeps the bound meaningful where
    signed inputs cancel and C is near zero.

    For fp8 and int8, whose output dtype the problem chooses, ``A`` and ``B``
    are the dequantised operands (scales applied), the figure covers the
    accumulation alone, and the core adds the rounding of C to its dtype:
    half an ulp of the reference, and half that dtype's smallest subnormal
    (:func:`gemmreg.checking.output_check.compare`).
    """

    rtol: float = attrs.field(validator=_non_negative_float)
    atol: float = attrs.field(default=0.0, validator=_non_negative_float)
    why: str = ""
    """Where the figure comes from. Required when ``rtol`` or ``atol`` is loose
    for its dtype (:data:`LOOSE_RTOL`, :data:`LOOSE_ATOL`). Both must be finite."""


def check_tolerances(instance: KernelSpec, attribute: attrs.Attribute, value: dict) -> None:
    """The validator of ``KernelSpec.tolerances``: one :class:`Tolerance` per
    declared dtype, and a ``why`` for every loose one (rtol or atol). attrs validates the
    fields in order, so ``capabilities`` was already refused unless it is a
    ``Capabilities``."""
    declared = getattr(instance.capabilities, "dtypes", None)
    if declared is None:
        return  # the capabilities field names its own error
    missing = sorted(set(declared) - set(value))
    if missing:
        raise _fail(instance, attribute, f"no tolerance for declared dtypes {missing}")
    for dtype, tolerance in value.items():
        if dtype not in LOOSE_RTOL:
            raise _fail(instance, attribute, f"unknown dtype {dtype!r}")
        if not isinstance(tolerance, Tolerance):
            raise _fail(instance, attribute, f"{dtype}: must be a Tolerance")
        for name, figure, bound in (
            ("rtol", tolerance.rtol, LOOSE_RTOL[dtype]),
            ("atol", tolerance.atol, LOOSE_ATOL[dtype]),
        ):
            if figure > bound and not tolerance.why.strip():
                raise _fail(
                    instance,
                    attribute,
                    f"{dtype}: {name} {figure:g} is loose (> {bound:g}); say why in Tolerance(why=...)",
                )
