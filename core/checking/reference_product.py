"""The float64 reference a kernel's C is judged against: ``A @ B`` and the
scale of its error, ``|A| @ |B|``.

Computed from the very tensors the kernel read (already cast to the
problem's dtype), so input rounding is never counted as kernel error, and
with the ops :mod:`gemmreg.discovery.judge_state` captured before any plugin
ran, so no plugin's rebinding of ``@`` or ``torch.mm`` reaches it. Apart
from :mod:`gemmreg.checking.output_check`, which measures the error, because
it is the one part whose memory grows with the problem: it is summed in
slices of K.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gemmreg.contract.grouping import row_ranges
from gemmreg.discovery import judge_state

if TYPE_CHECKING:
    import torch

REFERENCE_SLICE_BYTES = 256 << 20
"""The most float64 memory one slice of A or B takes while the reference is
summed. A whole float64 copy of A at 65600x64x32768 is 16 GiB (and its
``abs`` as much again): on a GPU shared with other work that ran out of
memory, and the case read as the kernel's ERROR when the checker had failed."""


def reference(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``A @ B`` and ``|A| @ |B|`` in float64 (batched: item by item), summed
    over slices of K so that no float64 copy of an operand exceeds
    :data:`REFERENCE_SLICE_BYTES`: the checker's own memory must not be what
    fails a large case. The order of
    the float64 sum moves the reference by float64 rounding only, far below
    any tolerance a 32-bit or 16-bit kernel is held to."""
    import torch

    if a.dim() == 3:  # batched: each item on its own, stacked
        items = [reference(a_item, b_item) for a_item, b_item in zip(a, b, strict=True)]
        return torch.stack([r for r, _ in items]), torch.stack([s for _, s in items])
    ops = judge_state.ops()  # captured before any plugin ran (judge_state says why)
    (m, k), n = a.shape, b.shape[1]
    step = max(1, REFERENCE_SLICE_BYTES // (8 * max(m, n)))
    if step >= k:
        a64, b64 = a.double(), b.double()
        return ops.mm(a64, b64), ops.mm(a64.abs(), b64.abs())
    ref = torch.zeros(m, n, dtype=torch.float64, device=a.device)
    scale = torch.zeros_like(ref)
    for start in range(0, k, step):
        a64, b64 = a[:, start : start + step].double(), b[start : start + step].double()
        ops.addmm_(ref, a64, b64)
        ops.addmm_(scale, a64.abs(), b64.abs())
    return ref, scale


def grouped_reference(
    a: torch.Tensor, b: torch.Tensor, groups: tuple[int, ...]
) -> tuple[torch.Tensor, torch.Tensor]:
    """A grouped problem's :func:`reference`, member by member in float64:
    member i's rows of A times B[i], stacked as C is (an empty member: no rows)."""
    import torch

    parts = [reference(a[start:stop], b[i]) for i, (start, stop) in enumerate(row_ranges(groups))]
    return torch.cat([r for r, _ in parts]), torch.cat([s for _, s in parts])
