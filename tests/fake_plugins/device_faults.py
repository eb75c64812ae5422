"""Kernels that fail the way a GPU fails them, simulated on the CPU.

``fake_accelerator_error`` raises what torch raises after an illegal-address
store (``torch.AcceleratorError: CUDA error: an illegal memory access was
encountered``, as gpu_poison.py does on the H200) on every launch, also for
the problem it should have refused; ``fake_wrapped_fault`` catches that error
and raises a plain ValueError from it; ``fake_refuses`` refuses cleanly
(``Capabilities.require``); ``fake_kills_worker`` ends its worker process at
once with ``os._exit``, on every launch (a crashed or poisoned worker, case
after case).
"""

import os

import gemmreg
import torch

from fake_plugins import fp32_spec

AcceleratorError = getattr(torch, "AcceleratorError", None) or type(
    "AcceleratorError", (RuntimeError,), {}
)
"""torch's own class where it has one (2.8 on), a look-alike otherwise."""
ILLEGAL_ADDRESS = (
    "CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, "
    "so the stacktrace below might be incorrect."
)
KILLED_WORKER_CODE = 9


def faults(a, b, out):
    raise AcceleratorError(ILLEGAL_ADDRESS)


def wraps_fault(a, b, out):
    try:
        faults(a, b, out)
    except RuntimeError as error:
        raise ValueError("this kernel cannot run that problem") from error


def kills_worker(a, b, out):
    os._exit(KILLED_WORKER_CODE)


def refusing_prepare(problem):
    from fake_plugins.good import launch

    REFUSING.capabilities.require(problem)
    return launch


REFUSING = fp32_spec("fake_refuses", None, prepare=refusing_prepare)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_accelerator_error", faults))
    register(fp32_spec("fake_wrapped_fault", wraps_fault))
    register(fp32_spec("fake_kills_worker", kills_worker))
    register(REFUSING)
