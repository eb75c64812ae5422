"""A GPU kernel that never finishes: the host's synchronize waits forever.

For the H200 evidence run: ``gemmreg check fake_gpu_hang --timeout 60`` must
cost one timeout (the other cases skipped), and killing gemmreg meanwhile must
leave no worker behind. ``FAKE_GPU_HANG=triton`` spins in a Triton kernel on a
flag nobody sets; the default sleeps with ``torch.cuda._sleep`` for ~2^62
cycles (decades), over and over. Declared for GPUs only.
"""

import os

import gemmreg
import torch

from fake_plugins import fp32_spec
from fake_plugins.gpu_poison import GPU_ONLY

SLEEP_CYCLES = 1 << 62


def prepare(problem):
    if os.environ.get("FAKE_GPU_HANG") == "triton":
        from fake_plugins.gpu_kernels import spin_on_flag

        flag = torch.zeros(1, dtype=torch.int32, device="cuda")

        def spin(a, b, out):
            spin_on_flag[(1,)](flag)
            torch.cuda.synchronize()

        return spin

    def sleep(a, b, out):
        while True:
            torch.cuda._sleep(SLEEP_CYCLES)
            torch.cuda.synchronize()

    return sleep


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_gpu_hang", None, prepare=prepare, capabilities=GPU_ONLY))
