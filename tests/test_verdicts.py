"""The verdict logic, on synthetic figures: a claim needs separated ranges."""

from __future__ import annotations

import attrs
import pytest
from gemmreg.comparing import KernelSummary, judge, plan_order


def summary(
    name, medians, math="ieee_fp32", generator="gemmreg.inputs.normal_inputs", status="timed"
):
    medians = tuple(medians)
    ordered = sorted(medians)
    return KernelSummary(
        kernel=name,
        package="p 1",
        precision=f"{math} (detail)",
        math=math,
        generator=generator,
        status=status,
        process_medians_ms=medians,
        center_ms=ordered[len(ordered) // 2] if medians else None,
        low_ms=ordered[0] if medians else None,
        high_ms=ordered[-1] if medians else None,
    )


def test_separated_ranges_give_faster_and_slower():
    slow = summary("slow", [0.40, 0.397, 0.406])
    fast = summary("fast", [0.183, 0.183, 0.185])
    assert judge(slow, fast).verdict == "faster"
    assert judge(fast, slow).verdict == "slower"
    assert judge(slow, fast).speedup == pytest.approx(0.40 / 0.183)


def test_the_seeds_triton_rows_overlap_so_no_claim_is_made():
    # Section 11.5: grouped has the lower centre, but its range overlaps baseline's.
    baseline = summary("triton_baseline", [0.0870, 0.0987, 0.0990])
    grouped = summary("triton_grouped", [0.0851, 0.0867, 0.119])
    verdict = judge(baseline, grouped)
    assert verdict.verdict == "indistinguishable"
    assert verdict.speedup > 1  # a lower centre alone is not a claim
    assert "overlap" in verdict.explanation


def test_touching_ranges_are_not_a_claim():
    a = summary("a", [1.0, 1.1, 1.2])
    b = summary("b", [0.8, 0.9, 1.0])
    assert judge(a, b).verdict == "indistinguishable"


def test_unlike_precision_and_inputs_are_stated():
    ieee = summary("ieee", [1.0, 1.0, 1.0])
    tf32 = summary("tf32", [0.5, 0.5, 0.5], math="tf32", generator="other.gen")
    notes = " ".join(judge(ieee, tf32).notes)
    assert "UNLIKE PRECISION" in notes
    assert "input generators differ" in notes
    assert judge(ieee, summary("same", [2.0, 2.0, 2.0])).notes == ()


def test_a_kernel_without_timing_gets_no_verdict():
    ok = summary("ok", [1.0, 1.0, 1.0])
    failed = summary("failed", [], status="failed")
    verdict = judge(ok, failed)
    assert verdict.verdict == "no verdict"
    assert verdict.speedup is None


def test_each_process_shuffles_the_order_reproducibly():
    names = [f"k{i}" for i in range(6)]
    orders = [plan_order(names, process, seed=7) for process in range(5)]
    assert all(sorted(order) == names for order in orders)
    assert len({tuple(order) for order in orders}) > 1
    assert plan_order(names, 3, seed=7) == orders[3]


def test_a_better_centre_with_an_outlier_process_is_no_claim():
    baseline = summary("a", [10.0, 10.0, 10.0, 10.0, 1.0])
    other = summary("b", [5.0, 5.0, 5.0, 5.0, 11.0])
    verdict = judge(baseline, other)
    assert verdict.speedup == 2.0
    assert verdict.verdict == "indistinguishable" and "overlap" in verdict.explanation


def test_the_interval_is_reported_with_the_verdict():
    verdict = judge(summary("slow", [2.0, 2.1, 1.9]), summary("fast", [1.0, 1.05, 0.95]))
    low, high = verdict.interval
    assert verdict.verdict == "faster" and 1 < low <= verdict.speedup <= high


def test_beating_a_vendor_library_tenfold_is_flagged():
    vendor = attrs.evolve(summary("vendor", [10.0, 10.0, 10.0]), vendor_library=True)
    notes = " ".join(judge(vendor, summary("miracle", [0.5, 0.5, 0.5])).notes)
    assert "SUSPICIOUS" in notes
    assert "SUSPICIOUS" not in " ".join(judge(vendor, summary("good", [2.0, 2.0, 2.0])).notes)
