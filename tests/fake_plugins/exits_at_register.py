"""A plugin whose register hook calls sys.exit(0): CI would read a silent pass."""

import sys

import gemmreg


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    sys.exit(0)
