"""Operands that start inside their storage: the ``padded`` layout hands
views at a non-zero storage offset, with poison before every row's first
element and after its last, so a kernel that addresses an operand from its
storage's base instead of the tensor's own start fails there, while every
other layout (each starting at offset 0) still passes it."""

from __future__ import annotations

import gemmreg
import pytest
import torch
from fake_plugins import fp32_spec
from fake_plugins.storage_base import SPEC as FROM_STORAGE_BASE
from gemmreg.checking.operands import make_operands
from gemmreg.checking.output_check import check_case
from gemmreg.contract.inputs import LEAD_BYTES, PAD
from gemmreg_plugins import torch_ref

HONEST = fp32_spec("honest", lambda a, b, out: torch.mm(a, b, out=out))
"""torch.mm on the tensors as handed."""
TORCH_REF = torch_ref.TORCH_REF


def _poisoned(values: torch.Tensor) -> torch.Tensor:
    if values.dtype.is_floating_point:
        return values.isnan()
    return values == torch.iinfo(values.dtype).max


def _around_each_row(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The storage element just before each row's first element of the 2-D
    ``x``, and the one just after its last."""
    whole = x.untyped_storage().nbytes() // x.element_size()
    storage = torch.as_strided(x, (whole,), (1,), 0)
    rows, cols = x.shape
    starts = x.storage_offset() + torch.arange(rows) * x.stride(0)
    return storage[starts - 1], storage[starts + cols]


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "int8"])
def test_padded_operands_start_inside_their_storage_with_poison_before_every_row(dtype):
    problem = gemmreg.Problem(m=5, n=7, k=9, dtype=dtype, layout="padded")
    for x in make_operands(HONEST, problem, 3, "cpu", "smallint"):
        assert x.storage_offset() * x.element_size() == LEAD_BYTES > 0
        assert x.stride() == (x.shape[1] + PAD, 1)
        before, after = _around_each_row(x)
        assert bool(_poisoned(before).all()) and bool(_poisoned(after).all())
        assert not bool(_poisoned(x).any())


def test_a_strided_batch_of_padded_items_keeps_each_item_s_offset_and_poison():
    problem = gemmreg.Problem(m=5, n=7, k=9, batch=3, layout="padded", batch_layout="strided")
    packed = make_operands(
        HONEST, gemmreg.Problem(m=5, n=7, k=9, batch=3, layout="padded"), 3, "cpu", "normal"
    )
    for x, same in zip(make_operands(HONEST, problem, 3, "cpu", "normal"), packed, strict=True):
        assert torch.equal(x, same)
        for item in x:
            assert item.storage_offset() % x.stride(0) * x.element_size() == LEAD_BYTES
            before, after = _around_each_row(item)
            assert bool(before.isnan().all()) and bool(after.isnan().all())


@pytest.mark.parametrize("layout", ["rowmajor", "transposedA", "transposedB"])
def test_every_other_layout_starts_at_offset_zero(layout):
    a, b = make_operands(HONEST, gemmreg.Problem(m=5, n=7, k=9, layout=layout), 3, "cpu", "normal")
    assert a.storage_offset() == b.storage_offset() == 0


def test_a_kernel_reading_a_from_its_storage_base_fails_the_padded_case_alone():
    for layout in ("rowmajor", "transposedA", "transposedB"):
        problem = gemmreg.Problem(m=17, n=19, k=23, layout=layout)
        result = check_case(FROM_STORAGE_BASE, problem, 1, "normal")
        assert result.passed, (layout, result.reason)
    padded = gemmreg.Problem(m=17, n=19, k=23, layout="padded")
    failed = check_case(FROM_STORAGE_BASE, padded, 1, "normal")
    assert not failed.passed
    assert failed.reason == (
        "323/323 elements outside tolerance (NaN computed by the kernel in every element; "
        "A and B are finite, the padding around their rows is NaN: "
        "read before a row's start or past its end?)"
    )
    assert check_case(HONEST, padded, 1, "normal").passed
    assert check_case(TORCH_REF, padded, 1, "normal").passed
