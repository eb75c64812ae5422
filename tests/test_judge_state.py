"""A plugin that replaces what computes the reference or what compares C
with it fails its own case, naming what it replaced, and the next plugin is
judged as before: a kernel writing zeros once passed every case this way."""

from __future__ import annotations

import torch
from conftest import only_extra_plugins
from fake_plugins import fp32_spec
from gemmreg.checking import output_check, reference_product
from gemmreg.contract.records import Problem
from gemmreg.discovery import judge_state
from gemmreg.discovery.registry import discover

PROBLEM = Problem(m=16, n=16, k=16)


def honest(a, b, out):
    torch.mm(a, b, out=out)


def zeros(a, b, out):
    out.zero_()


def check(prepare):
    return output_check.check_case(fp32_spec("k", zeros, prepare=prepare), PROBLEM, seed=1)


def _zero_float64_products():
    matmul = torch.Tensor.__matmul__

    def patched(x, y):
        product = matmul(x, y)
        return torch.zeros_like(product) if product.dtype == torch.float64 else product

    torch.Tensor.__matmul__ = patched


def test_a_patched_tensor_matmul_fails_its_case_and_is_put_back():
    def prepare(problem):
        _zero_float64_products()
        return zeros

    result = check(prepare)
    assert not result.passed
    assert result.reason == "plugin changed global state: replaced torch.Tensor.__matmul__"
    assert "__matmul__" not in vars(torch.Tensor)
    spec = fp32_spec("next", honest)
    assert output_check.check_case(spec, PROBLEM, seed=1).passed


def test_a_judge_function_replaced_during_a_launch_is_named():
    original = output_check.compare

    def launch(a, b, out):
        output_check.compare = lambda *args, **kwargs: None

    result = check(lambda problem: launch)
    assert result.reason == (
        "plugin changed global state: replaced gemmreg.checking.output_check.compare"
    )
    assert output_check.compare is original


def test_the_reference_never_goes_through_a_rebound_name():
    judge_state.baseline()
    _zero_float64_products()
    try:
        a = torch.ones(2, 3, dtype=torch.float64)
        ref, scale = reference_product.reference(a, a.T.contiguous())
        assert bool((ref == 3).all()) and bool((scale == 3).all())
    finally:
        del torch.Tensor.__matmul__


def test_a_kernel_registered_for_aten_mm_fails_every_case_while_it_stays():
    judge_state.baseline()
    library = torch.library.Library("aten", "IMPL")

    def prepare(problem):
        library.impl("mm", lambda x, y: torch.zeros(x.shape[0], y.shape[1], dtype=x.dtype), "CPU")
        return zeros

    try:
        result = check(prepare)
        assert not result.passed
        assert "registered its own kernel for aten::mm" in result.reason
    finally:
        library._destroy()
    assert judge_state.changes() == []


def test_a_plugin_that_replaces_the_judge_at_import_is_refused_and_it_is_put_back():
    original = output_check.compare
    with only_extra_plugins(["fake_plugins.judge_patcher"]):
        registry = discover()
    assert output_check.compare is original
    assert "fake_judge_patcher" not in registry.kernels
    (issue,) = [i for i in registry.issues if i.origin.plugin == "fake_plugins.judge_patcher"]
    assert "replaced gemmreg.checking.output_check.compare" in issue.reason


def test_a_worker_left_with_a_dispatcher_kernel_retires_and_the_next_plugin_is_judged_fresh():
    """The kernel that registered for aten::mm fails, naming it; the worker
    retires, so an honest torch.mm kernel's cases after it run in a fresh
    worker and pass (they used to fail, blamed on that kernel)."""
    from conftest import check_in_one_worker
    from gemmreg.checking import matrix

    with only_extra_plugins(["fake_plugins.dispatch_registrar"]):
        kernels = discover().select(["fake_registers_mm", "fake_mm_after"])
        cases = [
            c
            for c in matrix.build("quick", gpu=False, dtypes=["fp32"], layouts=["rowmajor"])
            if c.problem.shape in ("64x64x64", "17x19x23")
        ]
        results = check_in_one_worker(kernels, cases)
    registrar = [r for r in results if r.kernel == "fake_registers_mm"]
    reference = [  # its values cases (a refusal case asks it to refuse fp16, which it cannot)
        r for r in results if r.kernel == "fake_mm_after" and r.problem.dtype == "fp32"
    ]
    assert registrar and reference
    assert "registered its own kernel for aten::mm" in registrar[0].reason
    assert all(r.status == "pass" for r in reference), [r.reason for r in reference]
