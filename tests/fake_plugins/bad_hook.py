"""A plugin whose hook asks for an argument the spec does not have."""

import gemmreg


@gemmreg.hookimpl
def gemmreg_register_kernels(register, no_such_argument):
    raise AssertionError("never called")
