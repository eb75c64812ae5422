"""C as the checker and the timing protocol hand it to a kernel: inside a
larger buffer, filled with a NaN of gemmreg's own bit pattern (elements never
written show), fenced by sentinel guards on both sides (writes out of bounds
show), and refilled before every timed call (:meth:`GuardedOutput.poison`).
:mod:`gemmreg.checking.output_check` judges what a kernel left there."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
from gemmreg.checking.guarded_inputs import Geometry, geometry, moved
from gemmreg.contract.inputs import torch_dtype
from gemmreg.contract.records import Problem

if TYPE_CHECKING:
    import torch

GUARD_ELEMENTS = 256
"""Elements of sentinel on each side of C, to catch out-of-bounds writes."""
GUARD_SENTINEL = -1280.0
"""Exactly representable in fp32, fp16 and bf16, and unlike any product of test inputs."""
SENTINEL_NAN_BITS = {"fp32": 0x7FC0BEEF, "fp16": 0x7E5B, "bf16": 0x7FDB, "int32": -(2**31) + 1}
"""C is pre-filled with a quiet NaN of this exact bit pattern. Arithmetic never
produces it (hardware NaNs are canonical), so an element that still holds it
was never written, while other NaNs were computed (e.g. from NaN padding read).
An int32 C (int8 problems) has no NaN: it gets -2^31 + 1, which an int8
product sums to only past K = 131071."""


def fill_sentinel(out: torch.Tensor) -> None:
    """Fill ``out`` with the sentinel NaN (its bit pattern, through an integer view)."""
    import torch

    dtype, int_type = {
        torch.float32: ("fp32", torch.int32),
        torch.float16: ("fp16", torch.int16),
        torch.bfloat16: ("bf16", torch.int16),
        torch.int32: ("int32", torch.int32),
    }[out.dtype]
    out.view(int_type).fill_(SENTINEL_NAN_BITS[dtype])


def sentinel_mask(out: torch.Tensor) -> torch.Tensor:
    """Where ``out`` still holds the sentinel: never written (shaped as ``out``;
    all False for a dtype C is never handed in, which has no sentinel)."""
    import torch

    if out.dtype not in (torch.float32, torch.float16, torch.bfloat16, torch.int32):
        return torch.zeros(out.shape, dtype=torch.bool, device=out.device)
    reference = torch.empty(1, dtype=out.dtype, device=out.device)
    fill_sentinel(reference)
    int_type = torch.int32 if out.element_size() == 4 else torch.int16
    return out.contiguous().view(int_type) == reference.view(int_type)


def sentinel_count(out: torch.Tensor) -> int:
    """How many elements of ``out`` still hold the sentinel: never written."""
    return int(sentinel_mask(out).sum())


@attrs.define
class GuardedOutput:
    """C inside a larger buffer: NaN inside (unwritten elements show), sentinel
    guards on both sides (out-of-bounds writes show).

    ``out`` is what the kernel is handed, and a kernel can re-point it
    (``out.set_(...)``, ``out.data = ...``) at a result it made elsewhere,
    leaving the buffer unwritten. So the checks read C and the guards through
    tensors of the core's own (:attr:`c`, made with the buffer), and
    :meth:`moved` says whether ``out`` still is where it was handed over."""

    buffer: torch.Tensor
    out: torch.Tensor
    c: torch.Tensor
    """C as the checks read it: the core's own alias of its memory, never
    handed to a kernel."""
    guards: torch.Tensor
    """The whole buffer, guards included, as :meth:`guards_intact` reads it."""
    handed: Geometry
    """Where ``out`` was when handed over (:func:`guarded_inputs.geometry`)."""
    poison_alias: torch.Tensor | None = None
    """C's memory under a version counter of its own, for :meth:`poison`."""

    @classmethod
    def allocate(cls, problem: Problem, device: str) -> GuardedOutput:
        import torch

        shape = (
            (problem.batch, problem.m, problem.n) if problem.batch > 1 else (problem.m, problem.n)
        )
        size = problem.batch * problem.m * problem.n
        buffer = torch.full(
            (size + 2 * GUARD_ELEMENTS,),
            GUARD_SENTINEL,
            dtype=torch_dtype(problem.out_dtype),
            device=device,
        )
        out = buffer[GUARD_ELEMENTS : GUARD_ELEMENTS + size].view(shape)
        fill_sentinel(out)
        return cls(
            buffer=buffer,
            out=out,
            c=_alias(out),
            guards=_alias(buffer),
            handed=geometry(out),
            poison_alias=_alias(out),
        )

    def moved(self) -> str:
        """``""`` while ``out`` is where it was handed over; else one line: a
        kernel that re-points C at memory of its own never wrote the C the
        checks and the timing read."""
        changed = moved(self.out, self.handed)
        return f"replaced C instead of writing it ({changed} changed)" if changed else ""

    def poison(self) -> None:
        """Refill C with the sentinel NaN, so a call that skips its work leaves it
        for the check. Through an alias: C's ``_version`` does not move, so a
        kernel that skips on an unchanged version takes the skip and is caught,
        instead of being quietly made to do the work by the poison itself."""
        fill_sentinel(self.poison_alias if self.poison_alias is not None else _alias(self.out))

    def guards_intact(self) -> bool:
        head = self.guards[:GUARD_ELEMENTS]
        tail = self.guards[-GUARD_ELEMENTS:]
        return bool((head == GUARD_SENTINEL).all() and (tail == GUARD_SENTINEL).all())


def _alias(x: torch.Tensor) -> torch.Tensor:
    """``x``'s memory as a tensor with a version counter of its own (no work)."""
    import torch

    alias = torch.empty(0, dtype=x.dtype, device=x.device)
    return alias.set_(x.untyped_storage(), x.storage_offset(), x.size(), x.stride())
