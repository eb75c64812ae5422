"""A kernel that keeps the first operands and C it was given and computes into
those on every later call (a cached-pointer bug: C++ launchers that capture
device pointers at prepare time do this). Its first call is right, so it
passes a precheck; only calls with other operands show it."""

import gemmreg
import torch

from fake_plugins import fp32_spec


def prepare(problem):
    first = []

    def launch(a, b, out):
        if not first:
            first.append((a, b, out))
        a0, b0, out0 = first[0]
        torch.mm(a0, b0, out=out0)

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_first_pointers", None, prepare=prepare))
