"""triton_grouped: the seed chapter's Triton GEMM with GROUP_M=8.

The kernel itself lives in :mod:`gemmreg_plugins.triton_seed`, shared with the
other seed Triton plugin; this package only fixes the program ordering.
"""

import gemmreg
from gemmreg_plugins import triton_seed

GROUP_M = 8


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(triton_seed.spec("triton_grouped", GROUP_M))
