"""The timing test plugins are correct kernels: each passes gemmreg's check on
the CPU, so what timing and integrity tests find about them is about timing
(the hostile ones included: what they skip, they skip only while timed)."""

from __future__ import annotations

import pytest
from conftest import check_in_one_worker, only_extra_plugins
from gemmreg.checking import check_runner
from gemmreg.checking.matrix import Case
from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import discover

MODULES = [
    "timing_plugins.twins",
    "timing_plugins.extra_pass",
    "timing_plugins.side_stream",
    "timing_plugins.unless_profiled",
    "timing_plugins.split_k",
    "timing_plugins.skip_on_repeat",
    "timing_plugins.cache_by_identity",
    "timing_plugins.detects_timing",
]
NAMES = [
    "twin_a",
    "twin_b",
    "mm_extra_pass",
    "side_stream_mm",
    "mm_unless_profiled",
    "split_k_mm",
    "skip_on_repeat",
    "cache_by_identity",
    "detects_timing",
]
CASES = [
    Case(problem=Problem(m=17, n=19, k=23)),
    Case(problem=Problem(m=17, n=19, k=23, dtype="fp16", layout="transposedB")),
]


@pytest.fixture(scope="module")
def results():
    with only_extra_plugins(MODULES):
        kernels = discover().select(NAMES)
        found = check_in_one_worker(kernels, CASES, task_timeout=120)
    return found


def test_every_timing_plugin_passes_the_check_on_the_cpu(results):
    ran = [r for r in results if r.kind == "values"]
    assert sorted({r.kernel for r in ran}) == sorted(NAMES)
    assert len(ran) == len(NAMES) * len(CASES)
    assert [r for r in ran if r.status != "pass"] == []
    assert check_runner.exit_code(results) == 0


def test_the_twins_are_two_kernels_from_one_module():
    with only_extra_plugins(["timing_plugins.twins"]):
        registry = discover()
        twins = registry.select(["twin_a", "twin_b"])
    assert [k.name for k in twins] == ["twin_a", "twin_b"]


def test_the_extra_pass_really_runs_an_elementwise_pass():
    import torch
    from timing_plugins import extra_pass

    launch = extra_pass._make_launch(Problem(m=8, n=8, k=8))
    a, b = torch.randn(8, 8), torch.randn(8, 8)
    out = torch.full((8, 8), float("nan"))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        launch(a, b, out)
    ops = [e.key for e in prof.key_averages()]
    assert "aten::mm" in ops and "aten::mul_" in ops
    assert torch.equal(out, a @ b)
