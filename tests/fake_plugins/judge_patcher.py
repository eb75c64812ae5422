"""A plugin that makes gemmreg's comparison pass everything when it is imported."""

import attrs
import gemmreg
from gemmreg.checking import output_check

from fake_plugins import fp32_spec

_compare = output_check.compare


def _lenient(*args, **kwargs):
    return attrs.evolve(_compare(*args, **kwargs), passed=True, reason="")


output_check.compare = _lenient


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_judge_patcher", lambda a, b, out: out.zero_()))
