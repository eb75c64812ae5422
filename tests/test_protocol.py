"""The timing protocol's pieces, on synthetic clocks and figures."""

from __future__ import annotations

import itertools
import math

import pytest
from gemmreg import stats, timing
from gemmreg.comparing import tile_efficiency
from gemmreg.records import Problem


class FakeClock:
    """Hands out preset sample values instead of timing anything."""

    def __init__(self, values):
        self.values = itertools.cycle(values)
        self.calls = 0

    def samples(self, call, count):
        self.calls += count
        return [next(self.values) for _ in range(count)]


POLICY = timing.Policy(
    warmup_min_calls=10,
    warmup_min_ms=25.0,
    warmup_max_s=10.0,
    min_samples=20,
    min_time_s=0.0,
    max_samples=500,
    max_time_s=10.0,
)


def test_warmup_needs_both_ten_calls_and_25_ms():
    assert timing.warm_up(None, FakeClock([1.0]), POLICY) == (25, 25.0)  # 1 ms calls: 25 of them
    assert timing.warm_up(None, FakeClock([10.0]), POLICY) == (10, 100.0)  # slow calls: 10


def test_steady_samples_stop_at_the_minimum():
    samples, why = timing.sample_until_steady(None, FakeClock([1.0, 1.0001]), POLICY)
    assert len(samples) == 20 and why.startswith("steady")


def test_noisy_samples_run_to_the_cap():
    samples, why = timing.sample_until_steady(None, FakeClock([1.0, 2.0, 0.5, 3.0]), POLICY)
    assert len(samples) == 500 and why == "sample cap (500)"


def test_fixed_repeats_take_exactly_that_many():
    fixed = timing.policy_for(gpu=True, repeats=7)
    samples, _ = timing.sample_until_steady(None, FakeClock([1.0, 5.0]), fixed)
    assert len(samples) == 7


def test_spread_and_sem():
    assert stats.relative_spread([1.0, 1.0, 1.0, 1.0]) == 0
    assert stats.relative_spread([1.0, 2.0]) == math.inf  # too few to say
    assert stats.relative_sem([2.0, 2.0, 2.0]) == 0
    assert 0 < stats.relative_sem([1.0, 1.1, 0.9, 1.05]) < 0.1


def test_bootstrap_interval_brackets_the_speedup_and_replays():
    baseline, other = [2.0, 2.1, 1.9, 2.05, 1.95], [1.0, 1.02, 0.98, 1.01, 0.99]
    low, high = stats.bootstrap_speedup(baseline, other, seed=3)
    assert 1.8 < low <= 2.0 <= high < 2.2
    assert stats.bootstrap_speedup(baseline, other, seed=3) == (low, high)


def test_tail_waste_matches_the_seed_example():
    # Seed 003: 130x70x65 with 64/32/32 tiles does about 33% useful work.
    assert tile_efficiency(Problem(m=130, n=70, k=65), (64, 32, 32)) == pytest.approx(
        0.334, abs=1e-3
    )
    assert tile_efficiency(Problem(m=64, n=64, k=64), (32, 32, 32)) == 1.0
    assert tile_efficiency(Problem(m=64, n=64, k=64), None) is None


def test_launch_bound_is_only_said_of_short_kernels(fake_plugins):
    from fake_plugins import fp32_spec
    from gemmreg.comparing import ProcessRun, summarize
    from gemmreg.registry import Origin, RegisteredKernel

    kernel = RegisteredKernel(
        spec=fp32_spec("k", lambda a, b, out: None),
        origin=Origin(plugin="k", module="k", distribution="d", version="1"),
    )

    def label(median_ms, graph_ms):
        runs = [
            ProcessRun(
                kernel="k", process=p, status="timed", samples_ms=(median_ms,), graph_ms=graph_ms
            )
            for p in range(3)
        ]
        return summarize(kernel, Problem(m=16, n=16, k=16), runs, "cpu").launch_bound

    assert label(0.008, 0.003)  # tiny: launch overhead dominates
    assert not label(0.008, 0.007)
    # A 0.66 ms kernel whose warm-L2 replay takes 0.28 ms is not launch-bound.
    assert not label(0.66, 0.28)


def test_tuning_kept_on_disk_counts_as_cold_start_and_is_reused_warm(
    fake_plugins, tmp_path, monkeypatch
):
    """compare gives its first process an empty GEMMREG_CACHE_DIR: a plugin that
    tunes in prepare pays for it there (cold), and the later processes reuse it."""
    from fake_plugins.tuning import TUNING_S
    from gemmreg.comparing import run_compare
    from gemmreg.records import Problem
    from gemmreg.registry import discover

    monkeypatch.setenv("HOME", str(tmp_path))  # where the plugin's default cache would go
    monkeypatch.delenv("GEMMREG_CACHE_DIR", raising=False)
    fake_plugins("tuning")
    kernels = [discover().kernels["fake_tuning"]]
    report = run_compare(
        kernels,
        Problem(m=8, n=8, k=8),
        processes=3,
        seed=0,
        clock="perf_counter",
        device_name="cpu",
        repeats=3,
        warmup=1,
    )
    (summary,) = report.summaries
    assert summary.cold_prepare_s >= TUNING_S
    assert summary.warm_prepare_s < TUNING_S / 2
    # The user's own cache was never touched.
    assert not (tmp_path / ".cache").exists()
