"""split_k_mm: an honest kernel of several launches per call, as split-K
GEMMs are: partial products over halves of K into a workspace (made on
its first call, where C's device is known), then a reduction of the partials into C. Every call does all of its
work; whatever protects against kernels that skip work must leave it alone.
"""

from __future__ import annotations

import gemmreg
import torch

from timing_plugins import torch_mm_spec

SPLITS = 2


def _make_launch(problem: gemmreg.Problem) -> gemmreg.Launch:
    splits = min(SPLITS, problem.k)
    bounds = [problem.k * s // splits for s in range(splits + 1)]
    dtype = gemmreg.torch_dtype(problem.dtype)
    workspace: list[torch.Tensor] = []

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        if not workspace:
            workspace.append(torch.empty(splits, *out.shape, dtype=dtype, device=out.device))
        partial = workspace[0]
        for s in range(splits):
            lo, hi = bounds[s], bounds[s + 1]
            torch.mm(a[:, lo:hi], b[lo:hi, :], out=partial[s])
        torch.sum(partial, dim=0, out=out)

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        torch_mm_spec(
            "split_k_mm",
            "torch.mm over halves of K into a workspace, then a reduction",
            _make_launch,
        )
    )
