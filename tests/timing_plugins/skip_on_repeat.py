"""skip_on_repeat: a hostile kernel. ``torch.mm``, except that a call with the
same operands and C as the last one, none of them written since (the same
pointers and torch version counters), returns at once: C still holds the
product, so it skips the GEMM. A single call, or calls on new inputs, are
right, so it passes gemmreg's check; timed on operands that never change, it
would look far faster than the ``torch.mm`` it runs.
"""

from __future__ import annotations

from typing import Any

import gemmreg
import torch

from timing_plugins import torch_mm_spec


def _identity(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> tuple[Any, ...]:
    return tuple((x.data_ptr(), x._version) for x in (a, b, out))


def _make_launch(problem: gemmreg.Problem) -> gemmreg.Launch:
    last: list[tuple[Any, ...]] = []

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        if last and last[0] == _identity(a, b, out):
            return  # nothing changed since the last call: C already holds A @ B
        torch.mm(a, b, out=out)
        last[:] = [_identity(a, b, out)]  # after the write, which moved C's version

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        torch_mm_spec(
            "skip_on_repeat", "torch.mm that skips a call on unchanged operands", _make_launch
        )
    )
