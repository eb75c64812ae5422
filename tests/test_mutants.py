"""The matrix catches every deliberately broken kernel, with the right reason.

Triton mutants run here under the interpreter; the GPU-only ones (int32
offsets past 2^31, the HIP early exit) are run on the device with
``gemmreg check --full`` and their results kept under evidence/.
"""

from __future__ import annotations

import pytest
from conftest import check_in_one_worker, only_extra_plugins
from gemmreg.checking import matrix
from gemmreg.discovery.registry import discover

MUTANTS = [
    "mutant_k_modulo",
    "mutant_store_mask_only",
    "mutant_b_stride_k",
    "mutant_acc_reset",
    "mutant_tail_unwritten",
    "mutant_writes_a",
    "mutant_cached",
]
BAD = {"fail", "crashed", "error", "timeout"}


SHAPES = {"64x64x64", "64x64x65", "65x64x64", "17x19x23"}
"""The cases the tests below read: an aligned square, a tail on K and on M, and
the seed's odd shape. Only these run (the mutants under the interpreter once
took two minutes over the whole quick matrix); each test below asserts on
named cases, so none of them sees less."""


@pytest.fixture(scope="module")
def results():
    with only_extra_plugins(["mutants.triton_mutants"]):
        kernels = discover().select(MUTANTS)
        cases = [
            case
            for case in matrix.build("quick", gpu=False, dtypes=["fp32"], layouts=["rowmajor"])
            if case.problem.shape in SHAPES and case.values == "normal"
        ]
        found = check_in_one_worker(kernels, cases)  # the mutants share a worker
    return {r.id: r for r in found}


def outcome(results, name, case):
    return results[f"{name}-fp32-{case}"]


def flagged(results, name):
    return [r for r in results.values() if r.kernel == name and r.status in BAD]


def test_k_wrapped_by_modulo_fails_exactly_where_k_has_a_tail(results):
    assert outcome(results, "mutant_k_modulo", "rowmajor-64x64x64").status == "pass"
    tail = outcome(results, "mutant_k_modulo", "rowmajor-64x64x65")
    assert tail.status == "fail" and "outside tolerance" in tail.reason


def test_mask_only_on_the_store_is_caught_where_a_bad_read_reaches_c(results):
    assert outcome(results, "mutant_store_mask_only", "rowmajor-64x64x64").status == "pass"
    for case in ("rowmajor-64x64x65", "rowmajor-17x19x23"):
        assert outcome(results, "mutant_store_mask_only", case).status in BAD, case
    # An M tail alone reads past A only for rows whose outputs are discarded:
    # values cannot show that read; a memory checker can (issue: sanitizer pass).
    assert outcome(results, "mutant_store_mask_only", "rowmajor-65x64x64").status == "pass"


def test_wrong_row_stride_for_b_is_caught_when_k_differs_from_n(results):
    assert (
        outcome(results, "mutant_b_stride_k", "rowmajor-64x64x64").status == "pass"
    )  # K == N hides it
    wrong = outcome(results, "mutant_b_stride_k", "rowmajor-17x19x23")
    assert wrong.status == "fail" and "outside tolerance" in wrong.reason


def test_accumulator_reset_in_the_k_loop_is_caught_when_k_exceeds_the_tile(results):
    assert (
        outcome(results, "mutant_acc_reset", "rowmajor-17x19x23").status == "pass"
    )  # one K step hides it
    wrong = outcome(results, "mutant_acc_reset", "rowmajor-64x64x64")
    assert wrong.status == "fail" and "outside tolerance" in wrong.reason


def test_an_unwritten_output_tail_is_caught_by_the_sentinel(results):
    assert outcome(results, "mutant_tail_unwritten", "rowmajor-64x64x64").status == "pass"
    wrong = outcome(results, "mutant_tail_unwritten", "rowmajor-65x64x64")
    assert wrong.status == "fail"
    assert "64 never written: still the sentinel NaN" in wrong.reason


def test_a_kernel_writing_into_a_is_caught(results):
    wrong = outcome(results, "mutant_writes_a", "rowmajor-17x19x23")
    assert wrong.status == "fail" and wrong.reason == "wrote into its inputs A or B"


def test_a_cached_result_is_caught_on_fresh_inputs(results):
    wrong = outcome(results, "mutant_cached", "rowmajor-17x19x23")
    assert wrong.status == "fail" and wrong.reason.startswith("on fresh inputs:")


@pytest.mark.parametrize("name", MUTANTS)
def test_every_mutant_is_flagged_and_refuses_what_it_does_not_declare(results, name):
    assert flagged(results, name)
    refusal = results[f"{name}-bf16-rowmajor-17x19x23-refuses-unsupported"]
    assert refusal.status == "pass" and "UnsupportedProblem" in refusal.reason
