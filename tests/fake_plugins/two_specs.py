"""Two kernels in one module, each named by an entry point of its own
(``two_specs:FAST``, ``two_specs:SMALL``), and both as one tuple (``KERNELS``):
no hook implementation, the specs alone."""

import torch

from fake_plugins import fp32_spec


def launch(a, b, out):
    torch.mm(a, b, out=out)


FAST = fp32_spec("fake_fast", launch)
SMALL = fp32_spec("fake_small", launch)
KERNELS = (FAST, SMALL)
