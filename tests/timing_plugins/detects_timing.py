"""detects_timing: a hostile kernel. ``torch.mm``, except when it finds
gemmreg's round loop on its call stack (it is being timed) and has already
written this C once: then it returns at once, trusting C to still hold the
product. Outside the rounds (gemmreg's check, the precheck) every call
computes, so it passes the check.
"""

from __future__ import annotations

import sys

import gemmreg
import torch

from timing_plugins import torch_mm_spec

TIMING_MODULE = "gemmreg.timing.round_loops"


def being_timed() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == TIMING_MODULE:
            return True
        frame = frame.f_back
    return False


def _make_launch(problem: gemmreg.Problem) -> gemmreg.Launch:
    written: set[int] = set()

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        if out.data_ptr() in written and being_timed():
            return
        torch.mm(a, b, out=out)
        written.add(out.data_ptr())

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        torch_mm_spec(
            "detects_timing", "torch.mm that skips its work when it sees it is timed", _make_launch
        )
    )
