"""Triton kernels for the GPU fault plugins, imported only when one prepares
(importing a plugin must not import triton)."""

import triton
import triton.language as tl


@triton.jit
def store_far_away(out_ptr, offset):
    """Store one element ``offset`` elements past ``out_ptr``: with a huge
    offset, an illegal address that poisons the CUDA context."""
    tl.store(out_ptr + offset, 1.0)


@triton.jit
def spin_on_flag(flag_ptr):
    """Spin until ``*flag_ptr`` is non-zero; nobody ever sets it."""
    while tl.load(flag_ptr, volatile=True) == 0:
        pass
