"""A kernel that cannot run here, and counts how often it was asked."""

import gemmreg

from fake_plugins import fp32_spec

ASKED: list[str] = []
"""One entry per call of the kernel's ``available()``, in this process."""


def available():
    ASKED.append("asked")
    return "never available (a test plugin)"


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_counted", lambda a, b, out: None, available=available))
