"""What a failing output's NaN and Inf were, in words that say what was seen.

A cause is named only where the case shows it could be the cause. The kernel
computed NaN while A and B were all finite and sat between padding that holds
NaN (the ``padded`` layout, :func:`gemmreg.contract.inputs.apply_layout`:
poison before each row's first element and after its last): then the
padding's NaN was the only NaN within the kernel's reach, and "read before a
row's start or past its end?" is a question the evidence raises (a kernel
that addresses its operands from their storage's base instead of their own
start reads the poison before the first row). Anywhere else, NaN has other
causes as likely (a NaN accumulator, 0 * Inf, stale shared memory: the
sanitizer's poison), and an output NaN or Inf everywhere is reported as just
that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def note(
    got: torch.Tensor,
    unwritten_at: torch.Tensor,
    nan_expected: torch.Tensor,
    padded: tuple[torch.Tensor, torch.Tensor] | None,
) -> str:
    """`` (...)`` to append to a failure's reason, or ``""``. ``unwritten_at``:
    the elements still holding the sentinel NaN (reported apart);
    ``nan_expected``: where the reference is NaN (an input's NaN), so C's NaN
    there is right and a number there is not; ``padded``: the operands the
    kernel read, given only when NaN filled their padding (before and after
    every row)."""
    total = got.numel()
    nan = got.isnan()
    computed_nan = int((nan & ~unwritten_at & ~nan_expected).sum())
    lost_nan = int((nan_expected & ~nan).sum())
    if lost_nan:
        return (
            f" ({lost_nan} elements are numbers where A's row or B's column holds NaN:"
            " the kernel read NaN as a number)"
        )
    if computed_nan:
        everywhere = computed_nan == total
        where = "in every element" if everywhere else f"in {computed_nan} elements"
        if nan_expected.any():
            where += " where the reference is finite"
        said = f"NaN computed by the kernel {where}"
        if padded is not None and all(bool(x.isfinite().all()) for x in padded):
            said += (
                "; A and B are finite, the padding around their rows is NaN:"
                " read before a row's start or past its end?"
            )
        return f" ({said})"
    if total and bool(got.isinf().all()):
        positive = int((got > 0).sum())
        sign = "+Inf" if positive == total else "-Inf" if not positive else "+Inf or -Inf"
        return f" (every element is {sign})"
    return ""
