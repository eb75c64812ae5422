"""mm_extra_pass: ``torch.mm`` then one more full pass over C that keeps its
values, a known small slowdown (one extra read and write of C).

The pass is ``out.mul_(1.0)``: ATen runs an elementwise multiply by a scalar
with no shortcut for 1.0 (it dispatches ``aten::mul_`` to the full kernel), and
multiplying by one is exact for every value, NaN and -0.0 included.
"""

from __future__ import annotations

import gemmreg
import torch

from timing_plugins import torch_mm_spec


def _make_launch(problem: gemmreg.Problem) -> gemmreg.Launch:
    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        torch.mm(a, b, out=out)
        out.mul_(1.0)

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(torch_mm_spec("mm_extra_pass", "torch.mm plus one extra pass over C", _make_launch))
