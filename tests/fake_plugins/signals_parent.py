"""A correct kernel that, called on an A of SIGNAL_AT_M_ENV rows, sends
SIGNAL_ENV (default SIGTERM) to the process that started its worker (gemmreg
itself) and then sleeps until that process kills it: an interruption that
arrives while a point is in flight on one GPU, at a known point rather than
after a guessed delay. A marker file (SIGNAL_MARKER_ENV, made atomically)
makes it happen once; every other call is a plain torch.mm."""

import os
import signal
import time

import gemmreg
import torch

from fake_plugins import claimed_once, fp32_spec

SIGNAL_AT_M_ENV = "GEMMREG_TEST_SIGNAL_AT_M"
SIGNAL_MARKER_ENV = "GEMMREG_TEST_SIGNAL_MARKER"
SIGNAL_ENV = "GEMMREG_TEST_SIGNAL"


def launch(a, b, out):
    at_m, marker = os.environ.get(SIGNAL_AT_M_ENV), os.environ.get(SIGNAL_MARKER_ENV)
    if at_m and marker and str(a.shape[0]) == at_m and claimed_once(marker):
        os.kill(os.getppid(), getattr(signal, os.environ.get(SIGNAL_ENV, "SIGTERM")))
        time.sleep(900)  # killed with its session long before
    torch.mm(a, b, out=out)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_signals_parent", launch))
