"""hip_tiled: the seed chapter's HIP kernel ``matmul_tiled``: 16x16 tiles of A and B in LDS, two barriers per K step, no early exit before the barriers.

The kernel is real HIP source in ``matmul_tiled.hip``, compiled when first used.
"""

from pathlib import Path

import gemmreg
from gemmreg_plugins import hip_seed

SOURCE = Path(__file__).with_name("matmul_tiled.hip")


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        hip_seed.spec(
            "hip_tiled",
            SOURCE,
            "matmul_tiled",
            "seed HIP GEMM: 16x16 LDS tiles, two barriers per K step",
            k_step=16,
        )
    )
