"""mm_unless_profiled: the profiling exploit. It computes C with ``torch.mm``
on the first call with given A, B and C, and again on every call made while
a profiler records (gemmreg's profiling process, CUPTI through torch's
profiler); any other call with the same tensors, C unwritten since, returns
at once, leaving the right values from before in C. Timed calls then do (almost) nothing while the
profiled ones do all the work: its values pass every check, its device
kernels look like torch.mm's, and only holding the timed calls to the
profiled work (``gemmreg.timing.vetoes``) can tell.
"""

from __future__ import annotations

import gemmreg
import torch
from torch.autograd import _profiler_enabled

from timing_plugins import torch_mm_spec


def _make_launch(problem: gemmreg.Problem) -> gemmreg.Launch:
    written: dict[tuple[int, ...], int] = {}
    """The version C had after this kernel last wrote it, by the tensors (and
    their versions) it was computed from: a C nobody has written since holds
    the right values."""

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        key = (id(a), id(b), id(out), a._version, b._version)
        if written.get(key) == out._version and not _profiler_enabled():
            return
        torch.mm(a, b, out=out)
        written[key] = out._version

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        torch_mm_spec(
            "mm_unless_profiled",
            "torch.mm only where a profiler records, or on the first call (the profiling exploit)",
            _make_launch,
        )
    )
