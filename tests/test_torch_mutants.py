"""The matrix catches the torch-written mutants (tests/mutants/torch_mutants.py),
each at the case that exposes its bug, with the reason that names it.

The first three passed the whole matrix, quick and full, until it held the
case that now catches each: a single row with K past a tile, a deep K
beside a small M and N, and int8 sums past 2^24. Their tests assert that
case is the only one that fails, so they also show what it costs to leave
it out. The kernels are torch ops, judged in this process: a few seconds.
"""

from __future__ import annotations

import functools

import pytest
from gemmreg.checking import matrix
from gemmreg.checking.matrix import Case
from gemmreg.checking.output_check import check_case
from mutants.torch_mutants import BY_NAME


@functools.cache
def quick_cases(name: str) -> dict[str, Case]:
    """The quick CPU matrix of the mutant ``name``, batched (3) and grouped
    cases included where it declares them, by case id."""
    caps = BY_NAME[name].capabilities
    built = matrix.build(
        "quick",
        gpu=False,
        dtypes=sorted(caps.dtypes),
        layouts=sorted(caps.layouts),
        batches=(1, 3) if caps.batch_layouts else (1,),
        grouped=caps.grouped,
    )
    return {case.id(name): case for case in built if not caps.unsupported(case.problem)}


def reason(name: str, case_id: str) -> str:
    """Why the case failed ("" where it passed)."""
    case = quick_cases(name)[f"{name}-{case_id}"]
    result = check_case(BY_NAME[name], case.problem, case.seed, case.values)
    return "" if result.passed else result.reason


def failing(name: str) -> dict[str, str]:
    """Every quick case the mutant fails, by id (without the mutant's name)."""
    found = {
        i.removeprefix(f"{name}-"): reason(name, i.removeprefix(f"{name}-"))
        for i in quick_cases(name)
    }
    return {i: why for i, why in found.items() if why}


def test_a_gemv_path_reading_b_as_a_weight_fails_only_at_one_row_with_k():
    # 1xNx1 and (1 row, K) shapes before it had K == 1, where B's storage
    # read as N x K holds the same elements
    assert failing("tm_gemv_weight_layout") == {
        "fp32-rowmajor-1x67x69": "67/67 elements outside tolerance",
        "fp16-rowmajor-1x67x69": "66/67 elements outside tolerance",
        "bf16-rowmajor-1x67x69": "65/67 elements outside tolerance",
    }


def test_a_split_k_that_drops_k_remainder_fails_at_deep_k_in_fp32():
    # fp16's and bf16's rounding of C is coarser than one product in 4133:
    # fp32, which a split-K path shares with them, is where the loss shows
    assert failing("tm_split_k_drops_tail") == {
        "fp32-rowmajor-17x19x4133": "278/323 elements outside tolerance"
    }


def test_int8_summed_in_fp32_fails_where_its_sums_pass_2_to_the_24():
    wrong = failing("tm_int8_fp32_acc")
    assert set(wrong) == {
        "int8-rowmajor-32x32x8192-uniform",
        "int8-transposedB-32x32x8192-uniform",
    }
    assert all(why.endswith("/1024 elements outside tolerance") for why in wrong.values())


@pytest.mark.parametrize(
    ("name", "case_id", "expected"),
    [
        # a 16-bit accumulator: all-positive values (C cannot cancel) show it
        ("tm_acc_in_input_dtype", "fp16-rowmajor-65x67x69-uniform", "elements outside tolerance"),
        ("tm_tf32_undeclared", "fp32-rowmajor-17x19x23", "elements outside tolerance"),
        ("tm_writes_past_end", "fp32-rowmajor-1x1x1", "wrote outside C (guard region changed)"),
        (
            "tm_fp8_reciprocal",
            "fp8e4m3-fp32-tensor-rowmajor-64x64x64",
            "4096/4096 elements outside tolerance",
        ),
        (
            "tm_fp8_rowwise_as_tensor",
            "fp8e4m3-fp32-rowwise-transposedB-48x80x32",
            "elements outside tolerance",
        ),
        ("tm_int8_int16_acc", "int8-rowmajor-64x64x64", "elements outside tolerance"),
        (
            "tm_batched_pairs",
            "b3strided-fp16-rowmajor-17x19x23",
            "in item 2 of 3 (323 never written: still the sentinel NaN)",
        ),
        (
            "tm_grouped_one_row_gemv",
            "g5_0_1_17_0_33-fp32-rowmajor-51x19x23",
            "elements outside tolerance in member 1 of 5",
        ),
    ],
)
def test_each_mutant_fails_its_case_with_the_reason(name, case_id, expected):
    assert expected in reason(name, case_id)


def test_the_caught_paths_pass_where_their_bug_is_not_taken():
    assert reason("tm_gemv_weight_layout", "fp32-rowmajor-1x64x1") == ""
    assert reason("tm_split_k_drops_tail", "fp32-rowmajor-128x128x128") == ""
    assert reason("tm_int8_fp32_acc", "int8-rowmajor-64x64x64-uniform") == ""
    assert reason("tm_fp8_rowwise_as_tensor", "fp8e4m3-fp32-tensor-rowmajor-48x80x32") == ""
