"""Kernels that run out of memory as a crowded GPU makes them: one only on
its first call of the whole check (another process held the memory then),
one on every call (it asks for more than there is), and one that fails with
another error, which is its own and must not be tried again. Calls are
counted in files under $GEMMREG_TEST_OOM_DIR, since each try runs in a
worker process of its own."""

import os
from pathlib import Path

import gemmreg
import torch

from fake_plugins import fp32_spec


def _count(name: str) -> int:
    """This kernel's calls so far in the whole check, this one included."""
    folder = Path(os.environ["GEMMREG_TEST_OOM_DIR"])
    with (folder / name).open("a") as calls:
        calls.write("call\n")
    return len((folder / name).read_text().splitlines())


def short_once(a, b, out):
    if _count("short_once") == 1:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.02 GiB")
    torch.mm(a, b, out=out)


def short_always(a, b, out):
    _count("short_always")
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 GiB")


def broken_once(a, b, out):
    if _count("broken_once") == 1:
        raise RuntimeError("illegal memory access (a test plugin)")
    torch.mm(a, b, out=out)


def spec(name, launch):
    """An fp32 kernel that refuses what it does not declare, so that only
    its out-of-memory cases can fail its check."""

    def prepare(problem):
        made.capabilities.require(problem)
        return launch

    made = fp32_spec(name, launch, prepare=prepare)
    return made


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(spec("fake_short_once", short_once))
    register(spec("fake_short_always", short_always))
    register(spec("fake_broken_once", broken_once))
