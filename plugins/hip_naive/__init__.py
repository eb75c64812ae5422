"""hip_naive: the seed chapter's HIP kernel ``matmul_naive``: one thread per output element, 16x16 blocks, no shared memory.

The kernel is real HIP source in ``matmul_naive.hip``, compiled when first used.
"""

from pathlib import Path

import gemmreg
from gemmreg_plugins import hip_seed

SOURCE = Path(__file__).with_name("matmul_naive.hip")


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        hip_seed.spec(
            "hip_naive",
            SOURCE,
            "matmul_naive",
            "seed HIP GEMM: one thread per output, 16x16 blocks",
            k_step=1,
        )
    )
