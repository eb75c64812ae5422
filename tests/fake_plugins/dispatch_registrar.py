"""A plugin whose prepare registers its own CPU kernel for ``aten::mm`` in
torch's dispatcher: Python cannot take it back out, so the worker that ran
it must not run another plugin's case."""

import gemmreg
import torch

from fake_plugins import fp32_spec

_library = torch.library.Library("aten", "IMPL")


def _zeros(x, y):
    return torch.zeros(x.shape[0], y.shape[1], dtype=x.dtype)


def prepare(problem):
    _library.impl("mm", _zeros, "CPU")
    return lambda a, b, out: out.zero_()


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_registers_mm", lambda a, b, out: None, prepare=prepare))
    register(fp32_spec("fake_mm_after", lambda a, b, out: torch.mm(a, b, out=out)))
