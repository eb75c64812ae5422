"""How loose a declared tolerance may be before it must say why.

A tolerance is the one figure a plugin could bend to pass: the bound here
makes a loose one visible, with its reason, in the declaration itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
from gemmreg.declaration_checks import _fail

if TYPE_CHECKING:
    from gemmreg.records import DType

LOOSE_RTOL: Mapping[DType, float] = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 2e-2}
"""Above these bounds (in units of |A|@|B|) a tolerance is loose for its dtype,
and the declaration must say why. They sit a little above what a K=4096 dot
product accumulated in fp32 typically reaches for each input type."""


def check_tolerances(instance: Any, attribute: attrs.Attribute, value: dict) -> None:
    """The validator of ``KernelSpec.tolerances``: one :class:`~gemmreg.Tolerance`
    per declared dtype, and a ``why`` for every loose one."""
    from gemmreg.records import DTYPES, Capabilities, Tolerance  # records imports this module

    if not isinstance(instance.capabilities, Capabilities):
        return  # the capabilities field names its own error
    missing = sorted(set(instance.capabilities.dtypes) - set(value))
    if missing:
        raise _fail(instance, attribute, f"no tolerance for declared dtypes {missing}")
    for dtype, tolerance in value.items():
        if dtype not in DTYPES:
            raise _fail(instance, attribute, f"unknown dtype {dtype!r}")
        if not isinstance(tolerance, Tolerance):
            raise _fail(instance, attribute, f"{dtype}: must be a Tolerance")
        if tolerance.rtol > LOOSE_RTOL[dtype] and not tolerance.why.strip():
            raise _fail(
                instance,
                attribute,
                f"{dtype}: rtol {tolerance.rtol:g} is loose (> {LOOSE_RTOL[dtype]:g}); "
                "say why in Tolerance(why=...)",
            )
