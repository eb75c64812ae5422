"""The core's input generator: one seed, the same values, fresh tensors."""

from __future__ import annotations

import torch
from gemmreg import normal_inputs
from gemmreg.records import Problem


def test_the_same_seed_gives_the_same_values_in_tensors_of_their_own():
    """A process draws once per seed and hands every kernel a copy: a kernel
    that writes into its inputs must not change what the next one gets."""
    problem = Problem(m=8, n=6, k=4, dtype="fp32")
    a, b = normal_inputs(problem, 3, torch.device("cpu"))
    pristine = a.clone()
    a.fill_(0.0)  # a kernel writing into A
    again, b_again = normal_inputs(problem, 3, torch.device("cpu"))
    assert torch.equal(again, pristine) and torch.equal(b_again, b)
    assert again.data_ptr() != a.data_ptr() and b_again.data_ptr() != b.data_ptr()
    other, _ = normal_inputs(problem, 4, torch.device("cpu"))
    assert not torch.equal(other, pristine)


def test_dtypes_are_the_same_draw_rounded():
    fp32, _ = normal_inputs(Problem(m=4, n=4, k=4, dtype="fp32"), 9, torch.device("cpu"))
    fp16, _ = normal_inputs(Problem(m=4, n=4, k=4, dtype="fp16"), 9, torch.device("cpu"))
    assert fp16.dtype == torch.float16
    assert torch.equal(fp16, fp32.half())
