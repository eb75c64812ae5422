"""The timing protocol's pieces, on synthetic clocks and figures."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from gemmreg.contract.records import Problem
from gemmreg.timing import round_loops, timing
from gemmreg.timing.comparing import tile_efficiency


def test_tail_waste_matches_the_seed_example():
    # Seed 003: 130x70x65 with 64/32/32 tiles does about 33% useful work.
    assert tile_efficiency(Problem(m=130, n=70, k=65), (64, 32, 32)) == pytest.approx(
        0.334, abs=1e-3
    )
    assert tile_efficiency(Problem(m=64, n=64, k=64), (32, 32, 32)) == 1.0
    assert tile_efficiency(Problem(m=64, n=64, k=64), None) is None


def test_launch_bound_is_only_said_of_short_kernels(fake_plugins):
    from fake_plugins import fp32_spec
    from gemmreg.discovery.registry import Origin, RegisteredKernel
    from gemmreg.timing.summaries import summarize
    from gemmreg.timing.timing_records import ProcessRun

    kernel = RegisteredKernel(
        spec=fp32_spec("k", lambda a, b, out: None),
        origin=Origin(plugin="k", module="k", distribution="d", version="1"),
    )

    def label(median_ms, graph_ms):
        runs = [
            ProcessRun(
                kernel="k",
                process=p,
                status="timed",
                round_ms=(median_ms,),
                regime_ms={"graph replay": graph_ms},
            )
            for p in range(3)
        ]
        return summarize(kernel, Problem(m=16, n=16, k=16), runs, None, "cpu").launch_bound

    assert label(0.008, 0.003)  # tiny: launch overhead dominates
    assert not label(0.008, 0.007)
    # A 0.66 ms kernel whose warm-L2 replay takes 0.28 ms is not launch-bound.
    assert not label(0.66, 0.28)


def test_tuning_kept_on_disk_counts_as_cold_start_and_is_reused_warm(
    fake_plugins, tmp_path, monkeypatch
):
    """compare gives each kernel's cold-start process an empty GEMMREG_CACHE_DIR:
    a plugin that tunes in prepare pays for it there (cold), and the timed
    processes reuse it (warm)."""
    from fake_plugins.tuning import TUNING_S
    from gemmreg.contract.records import Problem
    from gemmreg.discovery.registry import discover
    from gemmreg.timing.comparing import run_compare

    monkeypatch.setenv("HOME", str(tmp_path))  # where the plugin's default cache would go
    monkeypatch.delenv("GEMMREG_CACHE_DIR", raising=False)
    fake_plugins("tuning")
    kernels = [discover().kernels["fake_tuning"]]
    report = run_compare(
        kernels,
        Problem(m=8, n=8, k=8),
        processes=2,  # the median of two: one process that tuned again fails it
        seed=0,
        clock="perf_counter",
        device_name="cpu",
        gpu=False,
        repeats=3,
        warmup=1,
    )
    (summary,) = report.summaries
    assert summary.cold_prepare_s >= TUNING_S
    assert summary.warm_prepare_s < TUNING_S / 2
    # The user's own cache was never touched.
    assert not (tmp_path / ".cache").exists()


def test_fixed_repeats_fix_the_rounds_and_warmup_the_soak():
    policy = timing.policy_for(gpu=True, repeats=7, warmup=3)
    assert policy.stop.min_rounds == policy.stop.max_rounds == 7
    assert policy.soak_min_calls == 3
    capped = timing.policy_for(gpu=True, max_time_s=0.5)
    assert (
        capped.stop.max_time_s == 0.5
        and capped.stop.min_rounds == timing.GPU_POLICY.stop.min_rounds
    )


class FakeTime:
    """A clock that moves only when a fake kernel runs."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


class FakeClock:
    """Each call of a kernel costs its preset time (ms) on the fake clock."""

    name = "fake"

    def __init__(self, fake_time, cost_ms):
        self.time, self.cost_ms = fake_time, cost_ms

    def samples(self, call, count):
        ms = self.cost_ms[call()]
        self.time.now += count * ms / 1e3
        return [ms] * count


def test_rounds_give_each_kernel_the_same_exposure_in_a_rotating_order(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(round_loops.time, "perf_counter", fake.perf_counter)
    clock = FakeClock(fake, {"fast": 0.3, "mid": 1.7, "slow": 9.0})
    # Stand-ins for prepared kernels: the fake clock reads who ran.
    kernels = [
        SimpleNamespace(name=name, call=lambda name=name: name) for name in ("fast", "mid", "slow")
    ]
    policy = timing.policy_for(gpu=False, repeats=6)
    cost = {"fast": 0.0003, "mid": 0.0017, "slow": 0.009}
    taken, reason = round_loops.take_rounds(kernels, clock, policy, cost, seed=3, monitor=None)
    assert len(taken) == 6 and reason == "round cap (6)"
    budget = max(policy.slot_s, 0.009)
    for r in taken:
        for name, wall in r.slot_wall_s.items():
            # Equal to the budget within half of one of that kernel's samples.
            assert abs(wall - budget) <= cost[name] / 2 + 1e-12, (name, wall)
    # Every kernel opened two of the six rounds (a Williams square for 3 is 6 rows).
    assert sorted(r.order[0] for r in taken) == ["fast", "fast", "mid", "mid", "slow", "slow"]


def test_merging_compile_caches_never_writes_into_an_existing_file(tmp_path):
    """Waiting workers have mapped shared libraries from the shared cache: a
    merge that rewrote them in place killed those workers on the H200."""
    import os

    from gemmreg.timing.cold_starts import merge_cache

    cold, shared = tmp_path / "cold", tmp_path / "shared"
    (cold / "ab").mkdir(parents=True)
    (cold / "ab" / "cuda_utils.so").write_bytes(b"new build")
    (cold / "ab" / "kernel.cubin").write_bytes(b"kernel")
    (shared / "ab").mkdir(parents=True)
    (shared / "ab" / "cuda_utils.so").write_bytes(b"loaded")
    inode = os.stat(shared / "ab" / "cuda_utils.so").st_ino
    merge_cache(cold, shared)
    assert (shared / "ab" / "cuda_utils.so").read_bytes() == b"loaded"
    assert os.stat(shared / "ab" / "cuda_utils.so").st_ino == inode
    assert (shared / "ab" / "kernel.cubin").read_bytes() == b"kernel"
    assert sorted(p.name for p in (shared / "ab").iterdir()) == ["cuda_utils.so", "kernel.cubin"]


def test_the_profiling_task_runs_in_a_worker_and_says_why_there_is_no_profile(fake_plugins):
    """The profiling process's task (one of several kinds a worker runs):
    on the CPU there is no CUPTI, and each kernel says so."""
    from gemmreg.workers import isolation
    from gemmreg.workers.tasks import ProfileTask

    fake_plugins("good")
    task = ProfileTask(kernels=["fake_good"], problem=Problem(m=8, n=8, k=8), seed=1)
    (outcome,) = isolation.run_tasks([task], task_timeout=120)
    assert outcome.status == "ok", outcome.error
    profile = outcome.result.kernels["fake_good"]
    assert profile.profile is None and "no GPU" in profile.unavailable
    assert "no GPU" in outcome.result.recorded()["fake_good"]["profile_unavailable"]


def runs_of_one_process(names, repeats):
    """Time torch_ref beside the state-changing fakes in one CPU process; the
    outcome of each kernel by name."""
    from gemmreg.discovery.registry import discover
    from gemmreg.timing.comparing import run_compare

    kernels = discover(
        env={"GEMMREG_PLUGINS": "torch_ref"}, extra_plugins=["fake_plugins.state_changers"]
    ).select(names)
    report = run_compare(
        kernels,
        Problem(m=8, n=8, k=8),
        processes=1,
        seed=0,
        clock="perf_counter",
        device_name="cpu",
        gpu=False,
        repeats=repeats,
        warmup=1,
        cold=False,
    )
    return {r.kernel: r for r in report.runs}


def test_a_plugin_that_changes_global_state_fails_its_own_row_and_spares_the_other(fake_plugins):
    """Once, a plugin that set the default dtype to float64 in prepare made
    torch_ref fail its precheck in the same worker, and torch_ref was blamed."""
    fake_plugins("state_changers")
    runs = runs_of_one_process(["torch_ref", "fake_sets_float64", "fake_changes_in_launch"], 2)
    assert runs["fake_sets_float64"].status == "failed"
    assert "plugin changed global state: default dtype" in runs["fake_sets_float64"].reason
    assert runs["fake_changes_in_launch"].status == "failed"  # at its first call
    assert runs["torch_ref"].status == "timed"


def test_a_plugin_that_sets_torch_cpu_threads_is_blamed_and_the_next_task_gets_them_back(
    fake_plugins,
):
    """torch.set_num_threads(1) in one plugin's prepare would slow every later
    CPU figure in that worker: it is blamed on that plugin and pinned back."""
    import torch
    from gemmreg.discovery import torch_state

    fake_plugins("state_changers")
    runs = runs_of_one_process(["fake_sets_one_thread", "torch_ref"], 2)
    assert runs["fake_sets_one_thread"].status == "failed"
    assert "intra-op CPU threads" in runs["fake_sets_one_thread"].reason
    assert runs["torch_ref"].status == "timed"
    started = torch.get_num_threads()
    try:
        torch.set_num_threads(max(1, started - 1) if started > 1 else 2)
        assert torch_state.pin().num_threads == started == torch.get_num_threads()
    finally:
        torch.set_num_threads(started)


def test_a_launch_that_changes_state_during_the_rounds_voids_its_process(fake_plugins):
    """Caught after the slot it happened in, blamed on that kernel; the
    process's rounds count for no one, since the others ran under it."""
    fake_plugins("state_changers")
    runs = runs_of_one_process(["torch_ref", "fake_changes_later"], 3)
    assert runs["fake_changes_later"].status == "failed"
    assert "allow_tf32" in runs["fake_changes_later"].reason
    assert runs["torch_ref"].status == "error"
    assert "fake_changes_later's launch changed global state" in runs["torch_ref"].reason
