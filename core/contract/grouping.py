"""Grouped problems: the grouped GEMM a mixture-of-experts layer runs, one
member per expert, C_i = A_i @ B_i with A_i (m_i x k), B_i (k x n), C_i
(m_i x n).

Only this form is a grouped problem: every member shares the dtype, n and k
(each expert holds a weight of one shape and gets its own count of tokens),
so a problem names the m of each member (:attr:`Problem.groups`) and n and k
once. Members of other shapes, a grouped problem that is also batched, and
fp8 or int8 (whose scales per member are not defined yet) are refused with
their reason. A member may be empty (an expert no token was routed to) or
one row.

The operands: A is the members' rows stacked (sum m_i x k, ``problem.m``
rows), B one k x n per member (a (groups, k, n) tensor), C stacked like A
(sum m_i x n); the kernel also gets the members' row offsets, an int32
tensor of groups + 1 entries on the device: member i's rows are
``offsets[i]:offsets[i + 1]`` of A and C. A problem that is not grouped
(``groups == ()``) leaves the field out of what is saved, so every earlier
run loads, keys and shows as before.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gemmreg.contract.bad_input import shown
from gemmreg.contract.declaration_checks import SpecError
from gemmreg.contract.serialization import OMITTED_WHEN
from gemmreg.contract.vocabulary import DTYPES

if TYPE_CHECKING:
    import torch
    from gemmreg.contract.records import Problem

MAX_GROUPS = 4096
"""The most members a grouped problem takes: past it, a typo."""
LISTED_SIZES = 8
"""Up to this many members, a label lists every member's m; past it, a digest of them."""
ONE_SHAPE = (
    "a grouped problem's members share n and k (an MoE layer's experts: one weight "
    "shape), so it names each member's m only"
)
"""Why a grouped problem takes no per-member n or k: said wherever one is refused."""


def sizes(value: object) -> tuple[int, ...]:
    """The converter of :attr:`Problem.groups`: a list or tuple, as a tuple
    (its members checked as the problem settles)."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    raise SpecError(f"Problem: groups must be a list of member sizes (m), got {shown(value)}")


def settle(problem: Problem) -> None:
    """Called as a problem is made: a grouped problem's sizes are whole
    numbers from 0, ``m`` is their sum, it is not batched, and it is fp32,
    fp16 or bf16."""
    groups = problem.groups
    if not groups:
        return
    if len(groups) > MAX_GROUPS:
        raise SpecError(f"Problem: at most {MAX_GROUPS} groups, got {len(groups)}")
    bad = [g for g in groups if isinstance(g, bool) or not isinstance(g, int) or g < 0]
    if bad:
        raise SpecError(
            f"Problem: each group's size is a row count (m) from 0, got {shown(bad[0])}; {ONE_SHAPE}"
        )
    if problem.m != sum(groups):
        raise SpecError(
            f"Problem: a grouped problem's m is its members' rows stacked: {sum(groups)} "
            f"for groups {shown_sizes(groups)}, not {problem.m}"
        )
    if problem.batch != 1:
        raise SpecError("Problem: a grouped problem is not also batched: its members are the batch")
    if problem.dtype not in DTYPES:
        raise SpecError(
            f"Problem: a grouped problem is {', '.join(DTYPES)}, not {problem.dtype} "
            "(scales per member are not defined)"
        )


def ungrouped(problem: Problem) -> bool:
    """The field is left out of what is saved for a problem that is not grouped."""
    return not problem.groups


OMITTED = {OMITTED_WHEN: ungrouped}
"""The groups field's metadata: left out of what is saved when there are none."""


def shown_sizes(groups: Sequence[int]) -> str:
    return ",".join(str(g) for g in groups)


def group_label(problem: Problem) -> str:
    """The first word of a grouped problem's label, case ids and shown shape:
    ``g4_0_1_512_4096`` (the count, then each member's m) up to
    :data:`LISTED_SIZES` members, ``g64_h1a2b3c4d`` past it (a digest of the
    sizes, so two groupings of the same count and rows never share a key);
    ``""`` for a problem that is not grouped."""
    groups = problem.groups
    if not groups:
        return ""
    if len(groups) <= LISTED_SIZES:
        return f"g{len(groups)}_" + "_".join(str(g) for g in groups)
    digest = hashlib.sha256(shown_sizes(groups).encode()).hexdigest()[:8]
    return f"g{len(groups)}_h{digest}"


def undeclared(problem: Problem, grouped: bool) -> str | None:
    """Why a grouped problem is outside what a kernel declares, or None."""
    if problem.groups and not grouped:
        return f"{len(problem.groups)} groups: grouped problems not declared"
    return None


def operand_shapes(problem: Problem) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The shapes of A and B as drawn: (m, k) and (k, n); batched, each with
    the batch first; grouped, A's members stacked (m, k) and one B per
    member (groups, k, n)."""
    m, n, k = problem.m, problem.n, problem.k
    if problem.groups:
        return (m, k), (len(problem.groups), k, n)
    lead = (problem.batch,) if problem.batch > 1 else ()
    return (*lead, m, k), (*lead, k, n)


def offsets(problem: Problem, device: torch.device | str) -> torch.Tensor:
    """The members' row offsets a grouped kernel is handed: int32, groups + 1
    entries, from 0 to ``m``; member i's rows are ``offsets[i]:offsets[i + 1]``."""
    import torch

    starts = [0]
    for size in problem.groups:
        starts.append(starts[-1] + size)
    return torch.tensor(starts, dtype=torch.int32, device=device)


def row_ranges(groups: Sequence[int]) -> list[tuple[int, int]]:
    """Each member's rows of A and C, ``(start, stop)``, in order."""
    ranges, start = [], 0
    for size in groups:
        ranges.append((start, start + size))
        start += size
    return ranges


def parse_sizes(value: object, where: str) -> tuple[int, ...]:
    """Member sizes as the command line (``--groups 0,1,512,4096``), a shapes
    file's ``groups`` cell (that text, or a list) or the Python API give them;
    :class:`~gemmreg.contract.options.UsageError` in one line, naming ``where``."""
    from gemmreg.contract.options import MAX_DIGITS, UsageError

    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise UsageError(
            f"{where}: expected member sizes (m), e.g. 0,1,512,4096; got {shown(value)}"
        )
    found: list[int] = []
    for item in items:
        text = item.strip() if isinstance(item, str) else item
        if isinstance(text, str) and re.fullmatch(r"\d+(x\d+)+", text):
            raise UsageError(f"{where}: {shown(text)} is a shape: {ONE_SHAPE}")
        if isinstance(text, str) and text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS:
            text = int(text)
        if isinstance(text, bool) or not isinstance(text, int) or not 0 <= text < 10**MAX_DIGITS:
            raise UsageError(f"{where}: a member's size is a row count from 0, got {shown(item)}")
        found.append(text)
    if len(found) > MAX_GROUPS:
        raise UsageError(f"{where}: at most {MAX_GROUPS} groups, got {len(found)}")
    if not any(found):
        raise UsageError(f"{where}: every group is empty ({shown_sizes(found)}): nothing to run")
    return tuple(found)


def parse_nk(text: str, where: str = "--shape") -> list[tuple[int, int]]:
    """``--shape`` beside ``--groups``: the n and k every member shares, as
    comma-separated ``NxK`` (``N`` alone: a square weight); an ``MxNxK`` is
    refused, since the members' m are the groups'."""
    from gemmreg.contract.options import MAX_DIGITS, UsageError

    shapes: list[tuple[int, int]] = []
    for item in (part.strip() for part in text.split(",")):
        parts = item.split("x")
        if len(parts) == 3:
            raise UsageError(
                f"{where} {item!r}: with --groups, give NxK (e.g. 4096x7168): {ONE_SHAPE}"
            )
        if not (1 <= len(parts) <= 2) or not all(
            p.isascii() and p.isdigit() and len(p) <= MAX_DIGITS and int(p) > 0 for p in parts
        ):
            raise UsageError(
                f"malformed {where} {item!r}: with --groups, expected NxK, e.g. 4096x7168"
            )
        n, k = int(parts[0]), int(parts[-1])
        shapes.append((n, k))
    return shapes
