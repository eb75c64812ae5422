"""Kernels that go wrong at run time, each in its own way."""

import ctypes
import os
import time

import gemmreg
import torch

from fake_plugins import fp32_spec


def segfault(a, b, out):
    ctypes.string_at(0)  # reads address 0: the process dies with SIGSEGV


def hang(a, b, out):
    started = os.environ.get("FAKE_HANG_STARTED")
    if started:  # tells a test that the worker is now inside the hung kernel
        with open(started, "a") as marker:
            marker.write(f"{os.getpid()}\n")
    time.sleep(3600)


_timed_calls = [0]


def hangs_while_timed(a, b, out):
    """Right at its first call (the precheck passes), then hangs in the rounds."""
    _timed_calls[0] += 1
    if _timed_calls[0] > 3:
        time.sleep(3600)
    torch.mm(a, b, out=out)


def raises(a, b, out):
    raise RuntimeError("kernel launch failed: invalid configuration")


def writes_into_a(a, b, out):
    torch.mm(a, b, out=out)
    a.mul_(2.0)


_cache = {}


def cached(a, b, out):
    # Computes once, then keeps returning the first result: wrong on fresh inputs.
    if "c" not in _cache:
        _cache["c"] = a @ b
    if _cache["c"].shape == out.shape:
        out.copy_(_cache["c"])
    else:
        torch.mm(a, b, out=out)


def skips_last_column(a, b, out):
    out[:, :-1] = a @ b[:, :-1]


def writes_past_the_end(a, b, out):
    torch.mm(a, b, out=out)
    flat = out.view(-1)
    torch.as_strided(flat, (1,), (1,), flat.storage_offset() + flat.numel() + 3).fill_(7.0)


KERNELS = {
    "fake_segfault": segfault,
    "fake_hang": hang,
    "fake_hangs_while_timed": hangs_while_timed,
    "fake_raises": raises,
    "fake_writes_a": writes_into_a,
    "fake_cached": cached,
    "fake_skips_column": skips_last_column,
    "fake_out_of_bounds": writes_past_the_end,
}


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    only = os.environ.get("FAKE_KERNELS")
    for name, launch in KERNELS.items():
        if only is None or name in only.split(","):
            register(fp32_spec(name, launch))
