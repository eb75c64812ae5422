"""A correct kernel whose calls sleep (a batch that stays in flight until its
driver is killed): its first call writes the marker file SLEEP_MARKER_ENV
names, so a test knows it is running, then sleeps SLEEP_S. Its worker dies
with the process that started it (gemmreg's lifeline) long before that."""

import os
import time

import gemmreg
import torch

from fake_plugins import fp32_spec

SLEEP_MARKER_ENV = "GEMMREG_TEST_SLEEP_MARKER"
SLEEP_S = 900.0


def launch(a, b, out):
    marker = os.environ.get(SLEEP_MARKER_ENV)
    if marker:
        with open(marker, "a") as note:
            note.write(f"sleeping {os.getpid()}\n")
    time.sleep(SLEEP_S)
    torch.mm(a, b, out=out)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_sleeps", launch))
