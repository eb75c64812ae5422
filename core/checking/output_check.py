"""Is one output right? The error measure against the float64 reference
(:mod:`gemmreg.checking.reference_product`) and the guards.

The reference is computed in float64 from the very tensors the kernel read
(already cast to the problem's dtype), so input rounding is never counted as
kernel error. Error is measured against ``|A| @ |B|``: with signed inputs C can
cancel to near zero, and plain relative error would then explode.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs
from gemmreg.checking import non_finite_notes
from gemmreg.checking.guarded_inputs import InputStorages
from gemmreg.checking.guarded_output import GuardedOutput, sentinel_mask
from gemmreg.checking.operands import make_operands as make_operands  # its home was here
from gemmreg.checking.operands import scale_shapes as scale_shapes
from gemmreg.checking.reference_product import grouped_reference, reference
from gemmreg.contract import backend
from gemmreg.contract.grouping import row_ranges
from gemmreg.contract.low_precision import FACTS, FormatFacts, is_low_precision
from gemmreg.contract.records import KernelSpec, Launch, Problem, Tolerance
from gemmreg.discovery import judge_state
from gemmreg.workers.task_results import Comparison as Comparison  # re-exported: was defined here
from gemmreg.workers.task_results import ValuesResult

if TYPE_CHECKING:
    import torch
    from gemmreg.discovery.torch_state import TorchState

FIRST_BAD_SHOWN = 5
"""How many mismatching elements a failure lists, with got/expected values."""
FRESH_SEED_OFFSET = 1_000_003
"""The recheck on fresh inputs uses seed + this, so a cached result shows."""


def compare(
    a: torch.Tensor,
    b: torch.Tensor,
    out: torch.Tensor,
    tolerance: Tolerance,
    nan_padding: bool = False,
    scales: tuple[torch.Tensor, ...] = (),
    rounding: FormatFacts | None = None,
    groups: tuple[int, ...] = (),
) -> Comparison:
    """``out`` against the float64 reference of ``a @ b``. ``nan_padding``: the
    operands the kernel read sat between padding that holds NaN (the ``padded``
    layout: before and after every row), which is what lets a failure ask
    whether it read outside a row. ``scales``: fp8's (scale_a, scale_b),
    applied to A and B (dequantised) before the product. ``rounding``: C's
    dtype where the problem chose it (fp8, int8): its rounding is added to
    the declared bound. ``groups``: a grouped problem's member sizes (A and C
    stacked, B one per member).

    Where the reference is NaN (an input's NaN reaches every element of its
    row or column of C: fp8's ``nan`` values), C must be NaN too, computed,
    not the sentinel left unwritten; a finite number there is wrong whatever
    its size, because the kernel read the NaN as a number."""
    if scales:
        a, b = a.double() * scales[0].double(), b.double() * scales[1].double()
    ref, scale = grouped_reference(a, b, groups) if groups else reference(a, b)
    got = out.double()
    unwritten_at = sentinel_mask(out)
    items = out.shape[0] if out.dim() == 3 else 0
    if items:  # batched: rows count on through the items (item * m + row)
        got, ref, scale, unwritten_at = (
            x.reshape(-1, x.shape[-1]) for x in (got, ref, scale, unwritten_at)
        )
    diff = (got - ref).abs()
    bound = tolerance.atol + tolerance.rtol * scale
    if rounding is not None:  # |C - sum| <= u |sum| <= u (|ref| + bound), + half a subnormal
        u = rounding.unit_roundoff
        bound = bound * (1 + u) + u * ref.abs() + rounding.smallest_subnormal / 2
    finite_got = got.isfinite()
    finite_ref = ref.isfinite()
    nan_mismatch = int((finite_got != finite_ref).sum())
    nan_expected = ref.isnan()
    nan_agrees = nan_expected & got.isnan() & ~unwritten_at
    bad = ~(diff <= bound) & ~nan_agrees  # any other NaN is bad
    bad_count = int(bad.sum())
    total = out.numel()
    finite_diff = diff[finite_got & finite_ref]
    scaled = finite_diff / scale[finite_got & finite_ref].clamp_min(1e-300)
    max_error = float(scaled.max()) if scaled.numel() else math.inf
    max_abs = float(finite_diff.max()) if finite_diff.numel() else math.inf
    finite_bound = bound[finite_got & finite_ref]
    used = finite_diff / finite_bound.clamp_min(1e-300)
    if rounding is not None:  # a bound of zero (int8): any difference is past it
        used = (finite_diff / finite_bound).nan_to_num(nan=0.0, posinf=math.inf)
    tolerance_used = float(used.max()) if used.numel() else math.inf
    if nan_mismatch:
        max_error = max_abs = tolerance_used = math.inf
    first_bad = tuple(
        (int(i), int(j), float(got[i, j]), float(ref[i, j]))
        for i, j in bad.nonzero()[:FIRST_BAD_SHOWN].tolist()
    )
    reason = ""
    if bad_count:
        unwritten = int(unwritten_at.sum())
        reason = f"{bad_count}/{total} elements outside tolerance"
        if items:
            reason += _bad_items(bad, items)
        if groups:
            reason += _bad_members(bad, groups)
        if unwritten:
            reason += f" ({unwritten} never written: still the sentinel NaN)"
        reason += non_finite_notes.note(
            got, unwritten_at, nan_expected, (a, b) if nan_padding else None
        )
    elif _is_constant(got) and not _is_constant(ref):
        reason = "output is constant while the reference is not"
    return Comparison(
        passed=not reason,
        max_error=max_error,
        max_abs_error=max_abs,
        bad_count=bad_count,
        total=total,
        first_bad=first_bad,
        nan_mismatch=nan_mismatch,
        reason=reason,
        tolerance=tolerance,
        tolerance_used=tolerance_used,
    )


def _bad_members(bad: torch.Tensor, groups: tuple[int, ...]) -> str:
    """`` in members 1, 3 of 5``: the members whose rows hold bad elements."""
    rows = bad.any(dim=1)
    wrong = [i for i, (start, stop) in enumerate(row_ranges(groups)) if rows[start:stop].any()]
    shown = ", ".join(str(i) for i in wrong[:FIRST_BAD_SHOWN])
    more = f" and {len(wrong) - FIRST_BAD_SHOWN} more" if len(wrong) > FIRST_BAD_SHOWN else ""
    return f" in member{'s' * (len(wrong) != 1)} {shown}{more} of {len(groups)}"


def _bad_items(bad: torch.Tensor, items: int) -> str:
    """`` in items 1, 2 of 3``: which items of a batch hold the bad elements
    (``bad`` is C's rows of every item, one after another)."""
    wrong = bad.reshape(items, -1).any(dim=1).nonzero().flatten().tolist()
    shown = ", ".join(str(i) for i in wrong[:FIRST_BAD_SHOWN])
    more = f" and {len(wrong) - FIRST_BAD_SHOWN} more" if len(wrong) > FIRST_BAD_SHOWN else ""
    return f" in item{'s' * (len(wrong) != 1)} {shown}{more} of {items}"


def _is_constant(x: torch.Tensor) -> bool:
    return x.numel() > 1 and bool((x == x.reshape(-1)[0]).all())


def run_and_compare(
    spec: KernelSpec,
    launch: Launch,
    problem: Problem,
    seed: int,
    device: str,
    values: str = "plugin",
) -> Comparison:
    """One launch on fresh inputs into a guarded, poisoned output, then every check."""
    operands = make_operands(spec, problem, seed, device, values)
    inputs = InputStorages.take(operands)
    guarded = GuardedOutput.allocate(problem, device)
    a, b, *scales = operands
    launch(a, b, guarded.out, *scales)
    backend.synchronize()
    return verify(spec, problem, inputs.before, inputs, guarded)


def verify(
    spec: KernelSpec,
    problem: Problem,
    before: tuple[torch.Tensor, ...],
    inputs: InputStorages,
    guarded: GuardedOutput,
) -> Comparison:
    """Every check of one output: C where it was handed over, values against
    the reference, inputs untouched (every byte of their storages), guards
    intact. ``before`` holds the values A and B (and the scales) should hold
    now, taken before the launch; C is read through the core's own alias
    (:attr:`GuardedOutput.c`), never through the tensor the kernel was handed."""
    from gemmreg.discovery.state_changes import replaced_judge

    tampered = replaced_judge()  # before the reference: it is computed with what they replace
    if tampered:
        reason = f"plugin changed global state: {'; '.join(tampered)}"
        total = guarded.c.numel()
        return Comparison(
            passed=False,
            max_error=math.inf,
            max_abs_error=math.inf,
            bad_count=total,
            total=total,
            reason=reason,
        )
    # The reference comes from the copies: a kernel that writes into A must not
    # move the reference along with it.
    padded = problem.layout == "padded"  # NaN in the padding (inputs.apply_layout)
    rounding = FACTS[problem.out_dtype] if is_low_precision(problem.dtype) else None
    a, b, *scales = before
    if problem.groups:  # the third is the members' offsets: checked below, as A and B are
        scales = []
    tolerance = spec.tolerance_for(problem.dtype)
    result = compare(a, b, guarded.c, tolerance, padded, tuple(scales), rounding, problem.groups)
    replaced = guarded.moved()
    if replaced:
        return attrs.evolve(result, passed=False, reason=replaced)
    names = ("A", "B", "the offsets") if problem.groups else ("A", "B", "scale_a", "scale_b")
    written = inputs.written(before, names[: len(before)])
    if written:
        what = "A, B or the offsets" if problem.groups else "A or B"
        if written == "wrote into its inputs":
            written += f" {what}"
        return attrs.evolve(result, passed=False, reason=written)
    if not guarded.guards_intact():
        return attrs.evolve(result, passed=False, reason="wrote outside C (guard region changed)")
    return result


def check_case(
    spec: KernelSpec,
    problem: Problem,
    seed: int,
    values: str = "plugin",
    before_launch: Callable[[], None] | None = None,
) -> ValuesResult:
    """The verdict for one case: prepare once, run on two input sets.

    The second run uses fresh inputs, so a kernel that returns a cached
    result fails it even when the first run passed. torch's global state is
    pinned first, as this kernel runs this problem (TF32 on where it declares
    TF32 math), and checked after prepare and after each launch: a plugin
    that changes it fails here, on its own row, not in the next plugin's.

    :param before_launch: Enqueued right before each launch of the kernel
        (the sanitizer pass's shared-memory poison), on the same stream.
    """
    from gemmreg.discovery import state_changes, torch_state

    judge_state.baseline()  # read now if not yet (the worker reads it before plugins load)
    expected = torch_state.pin_for(spec, problem)
    try:
        return _check_case(spec, problem, seed, values, before_launch, expected)
    except state_changes.StateChanged as error:
        return ValuesResult(passed=False, reason=str(error))


def _check_case(
    spec: KernelSpec,
    problem: Problem,
    seed: int,
    values: str,
    before_launch: Callable[[], None] | None,
    expected: TorchState,
) -> ValuesResult:
    from gemmreg.discovery import state_changes

    device = backend.current().device
    launch = spec.prepare(problem)
    state_changes.raise_on_changes(expected)
    launch = state_changes.checked(launch, expected)
    if before_launch is not None:
        launch = _preceded(before_launch, launch)
    first = run_and_compare(spec, launch, problem, seed, device, values)
    if not first.passed:
        return ValuesResult.of(first)
    fresh = run_and_compare(spec, launch, problem, seed + FRESH_SEED_OFFSET, device, values)
    if not fresh.passed:
        fresh = attrs.evolve(fresh, reason=f"on fresh inputs: {fresh.reason}")
    worst = fresh if not fresh.passed else first
    return ValuesResult.of(
        attrs.evolve(
            worst,
            max_error=max(first.max_error, fresh.max_error),
            max_abs_error=max(first.max_abs_error, fresh.max_abs_error),
            tolerance_used=max(first.tolerance_used or 0.0, fresh.tolerance_used or 0.0),
        )
    )


def _preceded(before: Callable[[], None], launch: Launch) -> Launch:
    def preceded_launch(
        a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, *scales: object
    ) -> None:
        before()
        launch(a, b, out, *scales)

    return preceded_launch
