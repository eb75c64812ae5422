"""A plugin that changes torch's default dtype when it is imported."""

import gemmreg
import torch

from fake_plugins import fp32_spec

torch.set_default_dtype(torch.float64)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_state_at_import", lambda a, b, out: torch.mm(a, b, out=out)))
