"""A correct kernel whose first call ever kills the process that started its
worker (under ``--ray``: the Ray worker running the batch) and then its own
worker, as a node lost mid-run would. A marker file (KILL_MARKER_ENV) makes
it happen once; every later call is a plain torch.mm."""

import os
import signal

import gemmreg
import torch

from fake_plugins import fp32_spec

KILL_MARKER_ENV = "GEMMREG_TEST_KILL_MARKER"


def launch(a, b, out):
    marker = os.environ.get(KILL_MARKER_ENV)
    if marker and not os.path.exists(marker):
        with open(marker, "w") as note:
            note.write(f"killed {os.getppid()}\n")
        os.kill(os.getppid(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
    torch.mm(a, b, out=out)


def prepare(problem):
    if problem.dtype != "fp32":
        raise ValueError("fake_kills_ray_worker runs fp32 only")
    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_kills_ray_worker", launch, prepare=prepare))
