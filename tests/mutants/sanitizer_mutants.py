"""HIP mutants that only the sanitizer pass catches (GPU only).

Each is the seed's tiled kernel (plugins/hip_tiled/matmul_tiled.hip) with one
bug, and passes the ordinary value matrix on a normal schedule; the header of
each ``.hip`` file says which check catches it and why the values stay right:

- ``mutant_hip_no_second_barrier``: racecheck (a shared-memory race);
- ``mutant_hip_uninit_shared``: smempoison (stale shared memory times zero);
- ``mutant_hip_oob_read``: memcheck (a read past the end of A, discarded).

Load with ``GEMMREG_EXTRA_PLUGINS=mutants.sanitizer_mutants`` and ``tests/`` on
PYTHONPATH.
"""

from pathlib import Path

import gemmreg
from gemmreg_plugins import hip_seed

HERE = Path(__file__).parent

MUTANTS = {
    "mutant_hip_no_second_barrier": (
        "matmul_tiled_no_second_barrier",
        "racecheck",
        "mutant: tiled HIP kernel without the second barrier of each K step",
    ),
    "mutant_hip_uninit_shared": (
        "matmul_tiled_uninit_shared",
        "smempoison",
        "mutant: tiled HIP kernel that leaves A's tile past K unwritten instead of zero",
    ),
    "mutant_hip_oob_read": (
        "matmul_tiled_oob_read",
        "memcheck",
        "mutant: tiled HIP kernel that loads past the end of A, then discards the value",
    ),
}
"""name: (kernel and file name, the one check that catches it, summary)."""


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for name, (kernel, _, summary) in MUTANTS.items():
        register(hip_seed.spec(name, HERE / f"{kernel}.hip", kernel, summary, k_step=16))
