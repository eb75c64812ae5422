"""The float64 reference is summed over slices of K when an operand's float64
copy would be large, and the sliced sum judges an output exactly as the whole
one does: a wrong element is still found, at its place, and a right output
still passes."""

from __future__ import annotations

import pytest
import torch
from gemmreg.checking import output_check, reference_product
from gemmreg.contract.records import Tolerance

M, N, K = 37, 29, 1000
STEP = 7
"""Columns of A (rows of B) per slice below: 143 slices, the last one ragged."""


@pytest.fixture
def sliced(monkeypatch):
    monkeypatch.setattr(reference_product, "REFERENCE_SLICE_BYTES", 8 * max(M, N) * STEP)


@pytest.fixture
def operands():
    generator = torch.Generator().manual_seed(5)
    a = torch.randn(M, K, generator=generator)
    b = torch.randn(K, N, generator=generator)
    return a, b


def test_small_operands_take_one_slice(operands):
    a, b = operands
    ref, scale = reference_product.reference(a, b)
    assert torch.equal(ref, a.double() @ b.double())
    assert torch.equal(scale, a.double().abs() @ b.double().abs())


def test_the_sliced_sum_is_the_whole_sum_to_float64_rounding(sliced, operands):
    a, b = operands
    ref, scale = reference_product.reference(a, b)
    whole = a.double() @ b.double()
    whole_scale = a.double().abs() @ b.double().abs()
    assert not torch.equal(scale, whole_scale), "the sum was not sliced: this test proves nothing"
    assert ((ref - whole).abs() <= 1e-12 * whole_scale).all()
    assert ((scale - whole_scale).abs() <= 1e-12 * whole_scale).all()


def test_a_sliced_reference_still_finds_a_wrong_element(sliced, operands):
    a, b = operands
    out = (a.double() @ b.double()).float()
    tolerance = Tolerance(atol=0.0, rtol=1e-5)
    assert output_check.compare(a, b, out, tolerance).passed
    out[11, 3] += 0.5
    result = output_check.compare(a, b, out, tolerance)
    assert not result.passed
    assert result.bad_count == 1
    assert result.first_bad[0][:2] == (11, 3)
