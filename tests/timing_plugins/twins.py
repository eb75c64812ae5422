"""twin_a and twin_b: the same ``torch.mm`` under two names, for A/A tests (a
comparison of a kernel with itself must not find a difference).

pluggy refuses one object registered twice, so this one module's hook
registers both specs.
"""

from __future__ import annotations

import gemmreg
import torch

from timing_plugins import torch_mm_spec


def _make_launch(problem: gemmreg.Problem) -> gemmreg.Launch:
    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        torch.mm(a, b, out=out)

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for name in ("twin_a", "twin_b"):
        register(torch_mm_spec(name, f"torch.mm (A/A twin {name[-1]})", _make_launch))
