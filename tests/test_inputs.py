"""The core's input generator: one seed, the same values, fresh tensors."""

from __future__ import annotations

import json

import attrs
import gemmreg
import torch
from conftest import REPO
from gemmreg import normal_inputs
from gemmreg.contract.inputs import generator_name
from gemmreg.contract.records import Problem


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


SAVED_RUN = "2026-11-30-h200-seed-table-512-fp32"
"""A run saved before the move, by a gemmreg whose kernels used the core's generator."""


def test_the_core_s_generator_keeps_the_name_saved_runs_recorded():
    """Runs compare their input generators by name: the core's own keeps the
    name runs saved before the core moved into layers recorded (the H200
    evidence's compare.json), so old and new runs are not told apart as
    unlike inputs; a plugin's own generator is named by its module."""
    spec = gemmreg.KernelSpec(
        name="named",
        summary="a kernel for its generator's name",
        prepare=lambda problem: lambda a, b, out: None,
        capabilities=gemmreg.Capabilities(precision={"fp32": gemmreg.Precision(math="fp64")}),
        tolerances={"fp32": gemmreg.Tolerance(rtol=1e-6, atol=1e-6)},
    )
    saved = json.loads((REPO / "evidence" / SAVED_RUN / "compare.json").read_text())
    assert {kernel["generator"] for kernel in saved["summaries"]} == {generator_name(spec)}
    own = attrs.evolve(spec, make_inputs=_own_generator)
    assert generator_name(own) == f"{__name__}._own_generator"


def _own_generator(problem, seed, device):
    return normal_inputs(problem, seed, device)
