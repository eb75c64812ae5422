"""Two correct kernels that log, on every call, the GPU their worker was
pinned to: the shape called, gemmreg's pinned index and CUDA_VISIBLE_DEVICES,
one line each in the file named by PIN_LOG_ENV (tests of ``--devices``); and,
in the file named by PID_LOG_ENV, the shape, the worker's pid and its
parent's (tests of which process served which point: ``bench --ray``)."""

import os

import gemmreg
import torch

from fake_plugins import fp32_spec

PIN_LOG_ENV = "GEMMREG_TEST_PIN_LOG"
PID_LOG_ENV = "GEMMREG_TEST_PID_LOG"


def _logged(name):
    def launch(a, b, out):
        torch.mm(a, b, out=out)
        path = os.environ.get(PIN_LOG_ENV)
        shape = f"{a.shape[0]}x{b.shape[1]}x{a.shape[1]}"
        if path:
            pinned = os.environ.get("GEMMREG_PINNED_DEVICE", "-")
            visible = os.environ.get("CUDA_VISIBLE_DEVICES", "-")
            with open(path, "a") as log:
                log.write(f"{name} {shape} {pinned} {visible}\n")
        pids = os.environ.get(PID_LOG_ENV)
        if pids:
            with open(pids, "a") as log:
                log.write(f"{name} {shape} {os.getpid()} {os.getppid()}\n")

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for name in ("fake_pinned_a", "fake_pinned_b"):
        register(fp32_spec(name, _logged(name)))
