"""One of two third-party plugins that claim the same kernel name."""

import gemmreg
import torch

from fake_plugins import fp32_spec


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_clash", lambda a, b, out: torch.mm(a, b, out=out)))
