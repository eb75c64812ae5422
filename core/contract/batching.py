"""Batched problems: C[i] = A[i] @ B[i] for every i below ``batch``, as
attention's score and value products run them (``torch.bmm``).

A problem of batch 1 is the plain GEMM it always was: 2-D operands, the same
keys, labels and saved form (its batch and batch layout are left out of what
is saved). A batched one has 3-D operands, each item laid out as the
problem's :data:`~gemmreg.contract.vocabulary.Layout` says and the items
placed as its :data:`~gemmreg.contract.vocabulary.BatchLayout` says
(:func:`gemmreg.contract.inputs.apply_batch_layout`). Batched problems are
fp32, fp16 or bf16: fp8's scales per item are not defined yet.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from gemmreg.contract.declaration_checks import SpecError
from gemmreg.contract.grouping import group_label
from gemmreg.contract.serialization import OMITTED_WHEN
from gemmreg.contract.vocabulary import DTYPES

if TYPE_CHECKING:
    from gemmreg.contract.records import Problem

MAX_BATCH = 4096
"""The largest batch a check or a timing point takes: past it, a typo."""
BATCH_GAP = 5
"""Elements between one item of a ``strided`` operand and the next: odd, as
the ``padded`` layout's padding is, so items do not start on a power of two
by chance; they hold NaN, so a kernel that reads past an item shows it."""


def settle(problem: Problem) -> None:
    """Called as a problem is made: a problem of batch 1 has no batch layout
    to choose (it follows ``packed`` whatever was given, so ``attrs.evolve``
    to batch 1 gives the plain problem); a batched one must be fp32, fp16 or bf16."""
    if problem.batch == 1:
        object.__setattr__(problem, "batch_layout", "packed")  # frozen: set as attrs would
        return
    if problem.dtype not in DTYPES:
        raise SpecError(
            f"Problem: a batched problem is {', '.join(DTYPES)}, not {problem.dtype} "
            f"(batch {problem.batch})"
        )


def unbatched(problem: Problem) -> bool:
    """The batch fields are left out of what is saved for a problem of batch 1,
    so it is written, keyed and shown as before they existed."""
    return problem.batch == 1


OMITTED = {OMITTED_WHEN: unbatched}
"""The batch fields' metadata: left out of what is saved for batch 1."""


def batch_label(problem: Problem) -> str:
    """``b8`` for a packed batch of 8, ``b8strided`` for a strided one, ``""``
    for batch 1: the first word of a batched problem's label and case ids."""
    if problem.batch == 1:
        return ""
    return f"b{problem.batch}{'' if problem.batch_layout == 'packed' else problem.batch_layout}"


def undeclared(problem: Problem, batch_layouts: Collection[str]) -> str | None:
    """Why a batched problem is outside the declared batch layouts, or None."""
    if problem.batch == 1 or problem.batch_layout in batch_layouts:
        return None
    if not batch_layouts:
        return f"batch {problem.batch}: batched problems not declared"
    declared = ", ".join(sorted(batch_layouts))
    return f"batch layout {problem.batch_layout} not declared (declares {declared})"


def form_label(problem: Problem) -> str:
    """A batched problem's :func:`batch_label`, a grouped one's
    :func:`~gemmreg.contract.grouping.group_label` (a problem is never both),
    ``""`` for the plain GEMM."""
    return batch_label(problem) or group_label(problem)


def labelled(problem: Problem, label: str) -> str:
    """``label`` with a batched or grouped problem's :func:`form_label` in front."""
    form = form_label(problem)
    return f"{form}-{label}" if form else label


def shown_shape(problem: Problem) -> str:
    """The shape as tables and progress lines show it: ``MxNxK``, and for a
    batched problem its batch first (``b8 MxNxK``, ``b8strided MxNxK``), for a
    grouped one its members (``g3_0_1_5 6xNxK``)."""
    form = form_label(problem)
    return f"{form} {problem.shape}" if form else problem.shape
