"""A kernel whose launch calls sys.exit(0) inside the worker."""

import sys

import gemmreg

from fake_plugins import fp32_spec


def launch(a, b, out):
    sys.exit(0)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_exits_in_launch", launch))
