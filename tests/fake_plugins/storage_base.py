"""A kernel with a hidden bug that every layout but ``padded`` hides: it
reads A from its storage's base instead of from A's own start, as a C++ or
ctypes launcher does that passes ``x.untyped_storage().data_ptr()`` where
``x.data_ptr()`` belongs. Right wherever A starts at storage offset 0
(row-major and transposed operands); wrong for a view that starts further
in, which is what the ``padded`` layout hands over (and what a slice of a
fused projection's output is). ``gemmreg check`` must FAIL its padded case
(tests/test_storage_offset.py).

- fake_storage_base: A read through ``torch.as_strided(a, a.shape,
  a.stride(), 0)``, B and C through the tensors as handed.
"""

import gemmreg
import torch

from fake_plugins import fp32_spec


def from_storage_base(a, b, out):
    torch.mm(torch.as_strided(a, a.shape, a.stride(), 0), b, out=out)


SPEC = fp32_spec("fake_storage_base", from_storage_base)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(SPEC)
