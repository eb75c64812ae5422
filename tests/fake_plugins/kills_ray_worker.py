"""A correct kernel whose first call ever kills the process that started its
worker (under ``--ray``: the Ray worker running the batch, or the actor
holding the pool of ``bench --ray``) and then its own worker, as a node lost
mid-run would. A marker file (KILL_MARKER_ENV), made atomically, makes it
happen once; every later call is a plain torch.mm. With KILL_AT_M_ENV set it
kills instead in every call whose A has that many rows, adding a line to
the marker file each time."""

import os
import signal

import gemmreg
import torch

from fake_plugins import claimed_once, fp32_spec

KILL_MARKER_ENV = "GEMMREG_TEST_KILL_MARKER"
KILL_AT_M_ENV = "GEMMREG_TEST_KILL_AT_M"


def launch(a, b, out):
    marker = os.environ.get(KILL_MARKER_ENV)
    at_m = os.environ.get(KILL_AT_M_ENV)
    kill = str(a.shape[0]) == at_m if at_m else bool(marker) and claimed_once(marker)
    if kill:
        if marker:
            with open(marker, "a") as note:
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
