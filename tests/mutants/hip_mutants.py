"""HIP mutants (GPU only): the seed's tiled kernel with an early exit before
the barriers."""

from pathlib import Path

import gemmreg
from gemmreg_plugins import hip_seed

SOURCE = Path(__file__).with_name("matmul_tiled_early_exit.hip")


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        hip_seed.spec(
            "mutant_hip_early_exit",
            SOURCE,
            "matmul_tiled_early_exit",
            "mutant: tiled HIP kernel whose out-of-range threads return before the barriers",
            k_step=16,
        )
    )
