"""A plugin that prints at import, at registration and at launch, through
Python, through the file descriptors and through C's stdio."""

import ctypes
import os
import sys

import gemmreg
import torch

from fake_plugins import fp32_spec

print("fake_prints says hello at import")
print("fake_prints complains at import", file=sys.stderr)
os.write(1, b"fake_prints writes fd 1 at import\n")
ctypes.CDLL(None).printf(b"fake_prints printf at import\n")


def launch(a, b, out):
    print("fake_prints launch says hi")
    torch.mm(a, b, out=out)


def available():
    print("fake_prints says hello from available()")
    os.write(1, b"fake_prints writes fd 1 from available()\n")


GPU_ONLY = gemmreg.Capabilities(
    dtypes={"fp32"},
    backends={"cuda", "rocm"},
    precision={"fp32": gemmreg.Precision(math="ieee_fp32", detail="torch.mm")},
)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    print("fake_prints says hello at registration")
    register(fp32_spec("fake_prints", launch, available=available))
    register(fp32_spec("fake_prints_gpu", launch, available=available, capabilities=GPU_ONLY))
