"""Imported by l2_flush_trace.py (beside it); not run on its own.

``triton_tuned`` with its TMA checks and its three descriptors memoised per
operand set (``triton_tuned_lean``), for probes that ask what a shorter host
path buys.
"""

import functools

from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import launchers, tma_rules
from triton.tools import tensor_descriptor
from triton.tools.tensor_descriptor import TensorDescriptor


def key(t):
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)


class LeanDescriptor(TensorDescriptor):
    memo: dict = {}

    @classmethod
    def from_tensor(cls, t, block):
        k = (key(t), tuple(block))
        d = cls.memo.get(k)
        if d is None:
            d = cls.memo[k] = TensorDescriptor.from_tensor(t, block)
        return d


@functools.lru_cache(maxsize=64)
def _refusal(ka, kb, kc, a, b, c):
    return tma_rules.tma_refusal(a, b, c)


def lean_refusal(a, b, c):
    return _refusal(key(a), key(b), key(c), a, b, c)


def lean_prepare(problem):
    saved = tensor_descriptor.TensorDescriptor, launchers.tma_refusal
    tensor_descriptor.TensorDescriptor, launchers.tma_refusal = LeanDescriptor, lean_refusal
    try:
        return triton_tuned.prepare(problem)
    finally:
        tensor_descriptor.TensorDescriptor, launchers.tma_refusal = saved
