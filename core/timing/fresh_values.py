"""New values in a kernel's operands before every round, in the same tensors.

Why values, and not just pointers, must change: a kernel that remembers its
result by the operands' identity (their pointers, or a Python ``id``) and
copies it into C on a later call, or one that skips the call outright when
it sees the same operands again, does no GEMM in the rounds, yet its C holds
the right numbers as long as A and B still hold the values that result was
computed from. Rotating placements (:mod:`gemmreg.timing.placements`) does not
change that: every placement held the same values, and every pointer comes
back every few rounds. On the H200 three such plugins, each wrapping
``torch.mm``, were timed FASTER than ``torch.mm`` (8.2x at 16x16x65536 bf16).
So each round writes new values into the A and B of the placement a kernel is
about to use (``copy_`` into the existing tensors: the pointers stay, torch's
version counter moves), and the postcheck compares each used placement's C
with the values that placement held at its last use. A stale result fails it.

The new values are the kernel's own generator's values, moved: A's rows and
B's columns are rotated by amounts drawn from the process's seed (its order
seed: the run's seed, the problem and the process index) and the round index,
so runs are reproducible and every kernel of a round is moved alike. Rotating
rows of A and columns of B permutes the entries of C: an honest kernel is held
to the entries of the C its precheck passed (up to the order of its own
rounding), only in other places, while every entry moves. Drawing from the
generator again would cost more than the rounds:
``gemmreg.contract.inputs.normal_inputs`` draws on the host (about a second
for 2 x 8192^2 on the H200's host; 18 ms for 16x16x65536 fp32 on a 2-core
CPU, against 4 ms for the rotation), and a round is a
few 10 ms slots. A rotation is a rotated copy of A and B on the device,
written back: two reads and two writes of each, outside every timed interval
(about 0.3 ms at 8192^3 bf16 at an H200's 4 TB/s). The check's copies are
not moved each round: a placement's rotation so far is kept (rotations add
up) and applied to the prechecked copies when its C is checked. Where C has one element (m = n = 1) the rows and columns
cannot move it: there A's K is rotated instead, which pairs other elements.
A 1x1x1 problem has nothing to move; only the poison guards it.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    import torch

Operands = tuple["torch.Tensor", ...]
"""A kernel's A and B, and for a scaled problem (fp8) their scales, for a
grouped one the members' offsets (which never move: rotating A's rows moves
values across members, and every member keeps its rows). torch is named for the type checker only: it is
imported where the values move, so that importing this module stays cheap."""


@attrs.frozen
class Shifts:
    """How far one round rotates A's rows, B's columns and A's K (0: not at all)."""

    rows: int = 0
    columns: int = 0
    depth: int = 0


def round_shifts(m: int, n: int, k: int, seed: int, index: int) -> Shifts:
    """The rotation before round ``index`` of a process drawn with ``seed``.

    Every shift that can be nonzero is (1 to size - 1), so each refresh moves
    every row of A, every column of B, relative to the placement's last use."""
    draw = random.Random(f"fresh values {seed} {index}")  # str seeds hash the same everywhere

    def shift(size: int) -> int:
        return 1 + draw.randrange(size - 1) if size > 1 else 0

    if m == 1 and n == 1:
        return Shifts(depth=shift(k))
    return Shifts(rows=shift(m), columns=shift(n))


def combined(first: Shifts, then: Shifts, m: int, n: int, k: int) -> Shifts:
    """One rotation for ``first`` followed by ``then`` (rotations add up)."""
    return Shifts(
        rows=(first.rows + then.rows) % max(m, 1),
        columns=(first.columns + then.columns) % max(n, 1),
        depth=(first.depth + then.depth) % max(k, 1),
    )


def move(operands: Operands, shifts: Shifts) -> Operands:
    """Rotate A and B in place (``copy_``: same tensors, same pointers and
    strides, whatever the layout); returns them. One operand at a time, so
    the rotated copy in flight is never more than the larger of A and B.
    Per-row scales move with A's rows and per-column ones with B's columns
    (a per-tensor scale stays), so each element keeps its scale. A batched
    problem's items move alike (their last two dimensions), and a grouped
    problem's B alike for every member."""
    a, b, *scales = operands
    if shifts.rows or shifts.depth:
        a.copy_(_roll(a, (shifts.rows, shifts.depth), (-2, -1)))
    if shifts.columns:
        b.copy_(_roll(b, (shifts.columns,), (-1,)))
    if len(scales) == 2:  # fp8's; a grouped problem's offsets stay
        scale_a, scale_b = scales
        if shifts.rows and scale_a.shape[0] > 1:
            scale_a.copy_(_roll(scale_a, (shifts.rows,), (0,)))
        if shifts.columns and scale_b.shape[1] > 1:
            scale_b.copy_(_roll(scale_b, (shifts.columns,), (1,)))
    return operands


def rotated(operands: Operands, shifts: Shifts) -> Operands:
    """New tensors holding A and B (and their scales) rotated by ``shifts``
    (the same ones where nothing moves): the check's copies of the values a
    placement holds, made from the prechecked copies by the placement's
    rotation so far when the check needs them, so no copy is kept per
    placement nor moved per round."""
    a, b, *scales = operands
    if shifts.rows or shifts.depth:
        a = _roll(a, (shifts.rows, shifts.depth), (-2, -1))
    if shifts.columns:
        b = _roll(b, (shifts.columns,), (-1,))
    if len(scales) == 2:  # fp8's; a grouped problem's offsets stay
        scale_a, scale_b = scales
        if shifts.rows and scale_a.shape[0] > 1:
            scale_a = _roll(scale_a, (shifts.rows,), (0,))
        if shifts.columns and scale_b.shape[1] > 1:
            scale_b = _roll(scale_b, (shifts.columns,), (1,))
        return a, b, scale_a, scale_b
    return (a, b, *scales)


def _roll(x: torch.Tensor, shifts: tuple[int, ...], dims: tuple[int, ...]) -> torch.Tensor:
    """``torch.roll``, through the bytes for a 1-byte element type (fp8 and
    int8 move as their bits: no arithmetic, whatever the device supports)."""
    import torch

    if x.element_size() == 1 and x.dtype != torch.uint8:
        return torch.roll(x.view(torch.uint8), shifts=shifts, dims=dims).view(x.dtype)
    return torch.roll(x, shifts=shifts, dims=dims)
