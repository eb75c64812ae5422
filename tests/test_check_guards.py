"""The check catches kernels that go wrong, each with the right reason, and a
crash or hang in one kernel never costs the other kernels their results."""

from __future__ import annotations

import pytest
from conftest import HANG_LIMIT_S, check_in_one_worker, only_extra_plugins
from gemmreg.checking import check_runner
from gemmreg.checking.matrix import Case
from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import discover

CASES = [Case(problem=Problem(m=17, n=19, k=23)), Case(problem=Problem(m=31, n=33, k=29))]
NAMES = [
    "fake_good",
    "fake_segfault",
    "fake_hang",
    "fake_raises",
    "fake_writes_a",
    "fake_cached",
    "fake_skips_column",
    "fake_out_of_bounds",
]


ISOLATED = NAMES[:3]
"""Checked by run_check itself, a worker each: a crash or a hang must cost only
its own kernel. The others raise or compute wrong answers without harming
their worker, so they share one (a worker per kernel is seconds each of torch
import)."""


@pytest.fixture(scope="module")
def results():
    with only_extra_plugins(["fake_plugins.good", "fake_plugins.misbehaving"]):
        registry = discover()
        found = check_runner.run_check(
            registry.select(ISOLATED), CASES, gpu=False, task_timeout=HANG_LIMIT_S
        )
        found += check_in_one_worker(registry.select(NAMES[len(ISOLATED) :]), CASES)
    return {name: [r for r in found if r.kernel == name and r.kind == "values"] for name in NAMES}


def statuses(results, name):
    return [r.status for r in results[name]]


def test_a_correct_kernel_passes_every_case(results):
    assert statuses(results, "fake_good") == ["pass", "pass"]
    assert all(r.max_error < 1e-6 for r in results["fake_good"])


def test_a_segfault_is_a_crash_row_and_the_next_case_still_runs(results):
    assert statuses(results, "fake_segfault") == ["crashed", "crashed"]
    assert "SIGSEGV" in results["fake_segfault"][0].reason


def test_a_hang_is_killed_and_reported(results):
    assert statuses(results, "fake_hang") == ["timeout", "skip"]  # one timeout, not one per case
    assert f"no answer within {HANG_LIMIT_S} s" in results["fake_hang"][0].reason
    assert results["fake_hang"][1].reason.startswith("skipped: an earlier case timed out (")


def test_an_exception_is_an_error_row_with_its_message(results):
    assert statuses(results, "fake_raises") == ["error", "error"]
    assert "invalid configuration" in results["fake_raises"][0].reason


def test_writing_into_an_input_fails(results):
    assert statuses(results, "fake_writes_a") == ["fail", "fail"]
    assert results["fake_writes_a"][0].reason == "wrote into its inputs A or B"


def test_a_cached_result_fails_on_fresh_inputs(results):
    first = results["fake_cached"][0]
    assert first.status == "fail"
    assert first.reason.startswith("on fresh inputs:")


def test_an_unwritten_column_is_caught_by_the_nan_sentinel(results):
    case = results["fake_skips_column"][0]
    assert case.status == "fail"
    assert "17 never written: still the sentinel NaN" in case.reason
    assert case.comparison["bad_count"] == 17
    _row, column, got, _ = case.comparison["first_bad"][0]
    assert column == 18 and got != got  # NaN


def test_a_write_past_the_end_of_c_is_caught_by_the_guard(results):
    assert statuses(results, "fake_out_of_bounds") == ["fail", "fail"]
    assert "guard region" in results["fake_out_of_bounds"][0].reason


def test_exit_code_is_one_on_any_failure_and_zero_otherwise(results):
    assert check_runner.exit_code(results["fake_good"]) == 0
    for name in NAMES[1:]:
        assert check_runner.exit_code(results[name]) == 1
