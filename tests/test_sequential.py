"""Sequential verdicts (gemmreg.timing.sequential, gemmreg.timing.look_verdicts):
the looks' levels, their error rates on simulated processes, and a comparison
that adds processes only while a pair is undecided (fake workers: the
processes run are counted, never timed)."""

from __future__ import annotations

import itertools
import math
import random
import re
import types

import pytest
from gemmreg.contract.records import Problem
from gemmreg.timing import compare_parts, comparing, look_verdicts, sequential, stats
from gemmreg.timing.timing_records import ProcessRecord, ProcessRun
from gemmreg.timing.verdicts import pair_key
from gemmreg.workers.tasks import TaskOutcome
from test_verdicts import records, summary

ALPHA = 1.0 - stats.CONFIDENCE
LOOKS = (3, 6, 12, 24, 48)
"""The process counts at each look of a run that doubles its batches up to
the cap, as the orchestration does with time to spare."""


def test_the_look_levels_sum_to_at_most_alpha_and_spend_most_early():
    levels = [sequential.look_alpha(j, ALPHA) for j in range(1, 100_001)]
    assert sum(levels) <= ALPHA
    assert sum(levels) == pytest.approx(ALPHA, rel=1e-4)  # open-ended: nothing left over
    assert levels[0] == pytest.approx(ALPHA * 6 / math.pi**2)
    assert all(a > b for a, b in itertools.pairwise(levels))
    assert sequential.look_confidence(1, stats.CONFIDENCE) > stats.CONFIDENCE
    with pytest.raises(ValueError, match="from 1"):
        sequential.look_alpha(0, ALPHA)


def test_the_batches_double_within_the_budget_and_the_cap():
    assert sequential.FIRST_BATCH == stats.MIN_PROCESSES
    assert sequential.next_batch(3, 6.0, 100.0) == 3  # doubling
    assert sequential.next_batch(6, 12.0, 20.0) == 4  # 2 s each, 8 s left
    assert sequential.next_batch(6, 12.0, 13.0) == 0  # not one more fits
    assert sequential.next_batch(24, 1.0, 1e9) == sequential.MAX_PROCESSES - 24
    assert sequential.next_batch(sequential.MAX_PROCESSES, 1.0, 1e9) == 0
    assert sequential.next_batch(3, 1.0, 0.0) == 0  # budget 0: the first batch only


def simulated(seed: int, ratio: float) -> list[float]:
    """One run's process log-ratios: each process off the true ``ratio`` by
    its own offset, the spread between processes drawn per run from the
    0.3-1.5% measured on the H200 (docs/timing.md), with now and then a
    process twice as far off (a placement or clock outlier)."""
    rng = random.Random(seed)
    sd = rng.uniform(0.003, 0.015)
    return [
        math.log(ratio) + rng.gauss(0.0, sd) * (2.0 if rng.random() < 0.05 else 1.0)
        for _ in range(LOOKS[-1])
    ]


def sequential_word(values: list[float]) -> tuple[str, int]:
    """The word and process count of the real judging, look by look."""
    v = look_verdicts.verdicts(
        [summary("base"), summary("new")],
        records(values),
        confidence=stats.CONFIDENCE,
        margin=stats.DEFAULT_MARGIN,
        processes=LOOKS[0],
        looks=LOOKS,
        budget_s=sequential.DEFAULT_BUDGET_S,
    )[0]
    assert v.processes is not None
    return v.verdict, v.processes


RUNS = 2000


def test_identical_kernels_claim_a_difference_at_most_one_percent_of_the_time():
    words = [sequential_word(simulated(seed, 1.0))[0] for seed in range(RUNS)]
    claims = sum(w in ("faster", "slower") for w in words)
    assert claims <= RUNS // 100, claims
    # and most are settled as what they are within the cap: equivalent (the
    # rest, at a spread near 1.5% between processes, stay undecided at 48)
    assert words.count("equivalent") >= 0.8 * RUNS


def test_a_true_two_percent_difference_is_decided_faster_in_nearly_all_runs():
    judged = [sequential_word(simulated(seed, 1.02)) for seed in range(RUNS)]
    faster = sum(w == "faster" for w, _ in judged)
    assert faster >= 0.99 * RUNS, faster
    assert not any(w == "slower" for w, _ in judged)
    counts = [n for _, n in judged]
    assert min(counts) < max(counts)  # each run stops at its own look


def test_a_true_difference_just_past_the_margin_is_rarely_called_equivalent():
    # equivalence is a claim too: its interval, at the look's level, must
    # hold the truth, so a 1.5% difference (outside +-1%) is seldom EQUIVALENT
    words = [sequential_word(simulated(seed, 1.015))[0] for seed in range(RUNS)]
    assert words.count("equivalent") <= RUNS // 100, words.count("equivalent")
    assert words.count("slower") == 0


def test_a_true_difference_on_the_margin_is_called_equivalent_at_most_alpha_of_the_time():
    """Equivalence is judged by two one-sided tests (the narrower interval of
    ``stats.equivalence_confidence``): at a true ratio of exactly 1 + margin,
    the worst case for that claim, it must still come out under alpha
    (0.5%) over every look, with room for the simulation's own noise."""
    edge = 1.0 + stats.DEFAULT_MARGIN
    words = [sequential_word(simulated(seed, edge))[0] for seed in range(RUNS)]
    assert words.count("equivalent") <= RUNS // 100, words.count("equivalent")


def test_a_pair_is_decided_at_its_first_clear_look_and_says_which():
    clear = [math.log(3.0) + d for d in (0.001, -0.001, 0.0)] + [-1.0] * 45
    v = sequential_word(clear)
    assert v == ("faster", 3)  # the later, contrary processes never reach it
    judged = look_verdicts.verdicts(
        [summary("base"), summary("new")],
        records(clear),
        confidence=stats.CONFIDENCE,
        margin=stats.DEFAULT_MARGIN,
        processes=3,
        looks=LOOKS,
        budget_s=40.0,
    )[0]
    assert "decided at look 1" in judged.explanation
    assert judged.confidence == pytest.approx(1 - sequential.look_alpha(1, ALPHA))


def test_an_undecided_pair_says_what_happened_not_what_might():
    wide = [0.05 * (-1) ** p for p in range(12)]
    v = look_verdicts.verdicts(
        [summary("base"), summary("new")],
        records(wide),
        confidence=stats.CONFIDENCE,
        margin=stats.DEFAULT_MARGIN,
        processes=3,
        looks=(3, 6, 12),
        budget_s=40.0,
    )[0]
    assert v.verdict == "inconclusive" and v.processes == 12
    assert "undecided after 12 processes within the budget of 40 s" in " ".join(v.notes)
    fixed = look_verdicts.verdicts(
        [summary("base"), summary("new")],
        records(wide[:5]),
        confidence=stats.CONFIDENCE,
        margin=stats.DEFAULT_MARGIN,
        processes=5,
    )[0]
    assert fixed.processes == 5 and fixed.confidence == stats.CONFIDENCE
    assert "undecided after 5 processes, a fixed count" in " ".join(fixed.notes)


def test_a_budget_that_ran_out_names_the_budget_that_buys_the_next_look():
    note = sequential.undecided_note(6, 20.0, 12.3)
    assert note == (
        "undecided after 6 processes within the budget of 20 s (another batch would not "
        "have fit: they took 12 s, so 6 more at that pace need --budget 25 or more)"
    )
    rng = random.Random(0)
    for _ in range(2000):
        done = rng.randint(1, sequential.MAX_PROCESSES - 1)
        elapsed = rng.uniform(0.01, 600.0)
        needed = sequential.next_look_budget(done, elapsed)
        assert needed is not None and needed == int(needed)
        more = min(done, sequential.MAX_PROCESSES - done)
        # the named budget starts the whole next batch at that pace, a second less does not
        assert sequential.next_batch(done, elapsed, needed) == more
        assert sequential.next_batch(done, elapsed, needed - 1.0) < more
    # no pace to go by (a run saved before it was kept), or nothing more to add
    assert sequential.next_look_budget(6, None) is None
    assert sequential.next_look_budget(sequential.MAX_PROCESSES, 10.0) is None
    assert "another batch would not have fit)" in sequential.undecided_note(6, 20.0)
    assert "--budget" not in sequential.undecided_note(sequential.MAX_PROCESSES, 20.0, 90.0)


# ---------------------------------------------------------------------------
# The orchestration: fake workers, processes counted
# ---------------------------------------------------------------------------


class FakeSession:
    def __init__(self, ran: list[int], process: int) -> None:
        self.ran, self.process = ran, process
        self.dead, self.last_note = False, ""

    def run(self, task, timeout):
        self.ran.append(self.process)
        return TaskOutcome(status="ok")

    def wait_ready(self) -> None:
        pass

    def close(self) -> None:
        pass

    begin_close = kill = close


class FakePool:
    """What run_compare asks of a pool, with every process it runs logged."""

    def __init__(self, size: int) -> None:
        self.ran: list[int] = []
        self.sessions: list[FakeSession | None] = [FakeSession(self.ran, i) for i in range(size)]
        self.profilers: list[FakeSession] = []

    def fresh(self, process: int = 0) -> FakeSession:
        return FakeSession(self.ran, process)

    def get(self, process: int) -> FakeSession:
        session = self.sessions[process]
        assert session is not None
        return session

    def grow(self, size: int) -> None:
        self.sessions += [self.fresh(i) for i in range(len(self.sessions), size)]

    def everyone(self):
        return [s for s in self.sessions if s is not None]

    def fit_profilers(self, count: int) -> None:
        assert count == 0


def compare_with(
    monkeypatch, ratio_of, budget_s, on_batch=None, gpus=(), family=1, seconds_per_process=None
):
    """A CPU comparison of two kernels whose process ``p`` measures the
    log-ratio ``ratio_of(p)``; the pool and the report. ``seconds_per_process``:
    the run's clock reads that many seconds for each process run so far, so a
    budget's arithmetic is exact (else the real clock, which barely moves)."""
    from fake_plugins import fp32_spec
    from gemmreg.discovery.registry import Origin, RegisteredKernel

    def from_outcome(names, process, outcome):
        runs = [
            ProcessRun(kernel=n, process=process, status="timed", round_ms=(1.0,)) for n in names
        ]
        ratios = {"end-to-end": {pair_key(*names): ratio_of(process)}}
        return runs, ProcessRecord(process=process, status="ok", log_ratios=ratios)

    monkeypatch.setattr(compare_parts, "from_outcome", from_outcome)
    kernels = [
        RegisteredKernel(
            spec=fp32_spec(name, lambda a, b, out: None),
            origin=Origin(plugin=name, module=name, distribution="d", version="1"),
        )
        for name in ("base", "new")
    ]
    pool = FakePool(sequential.FIRST_BATCH)
    if seconds_per_process is not None:
        clock = types.SimpleNamespace(monotonic=lambda: len(pool.ran) * seconds_per_process)
        monkeypatch.setattr(comparing, "time", clock)
    report = comparing.run_compare(
        kernels,
        Problem(m=8, n=8, k=8),
        processes=sequential.FIRST_BATCH,
        seed=0,
        clock="fake",
        device_name="cpu",
        gpu=False,
        pool=pool,  # type: ignore[arg-type]
        cold=False,
        budget_s=budget_s,
        on_batch=on_batch,
        gpus=gpus,
        family=family,
    )
    return pool, report


def test_a_pair_decided_at_its_first_look_runs_no_more_processes(monkeypatch, fake_plugins):
    pool, report = compare_with(monkeypatch, lambda p: math.log(3.0) + 0.001 * (p % 2), 1e9)
    assert sorted(pool.ran) == [0, 1, 2]
    assert report.looks == (3,) and report.processes == 3
    (v,) = report.verdicts
    assert v.verdict == "faster" and v.processes == 3


def test_an_undecided_pair_gets_batches_until_it_is_decided(monkeypatch, fake_plugins):
    # 3% faster with processes spread +-1.5%: no word from 3, one from more
    batches: list[tuple[int, int, int]] = []
    pool, report = compare_with(
        monkeypatch,
        lambda p: math.log(1.03) + 0.015 * (-1) ** p * (1 + p % 3) / 2,
        1e9,
        lambda *batch: batches.append(batch),
    )
    # each batch after the first was announced: its look, its size, the kernels it times
    looks = report.looks
    assert batches == [(j, looks[j] - looks[j - 1], 2) for j in range(1, len(looks))]
    (v,) = report.verdicts
    assert v.verdict == "faster" and v.processes is not None and v.processes > 3
    assert sorted(pool.ran) == list(range(report.looks[-1]))
    assert report.looks[0] == 3 and list(report.looks) == sorted(set(report.looks))
    assert v.processes == report.looks[-1]  # the run stopped once its one pair was decided


def test_a_point_judged_with_a_sweep_adds_processes_until_the_sweeps_level_decides(
    monkeypatch, fake_plugins
):
    """``bench --sweep-wide``: the looks are aimed at the run's level over the
    sweep's points, so a pair decided alone at its first look may need more."""
    spread = lambda p: math.log(1.03) + 0.015 * (-1) ** p * (1 + p % 3) / 2  # noqa: E731
    _, alone = compare_with(monkeypatch, spread, 1e9)
    pool, together = compare_with(monkeypatch, spread, 1e9, family=20)
    assert alone.family == 1 and together.family == 20
    (a,), (t,) = alone.verdicts, together.verdicts
    assert a.verdict == t.verdict == "faster"
    assert t.processes is not None and a.processes is not None and t.processes > a.processes
    assert len(pool.ran) == together.looks[-1] == t.processes
    look = together.looks.index(t.processes) + 1  # looks count from 1
    level = sequential.look_confidence(look, stats.family_confidence(stats.CONFIDENCE, 20))
    assert t.confidence == pytest.approx(level)


def test_a_pair_never_decided_runs_to_the_cap_or_the_budget(monkeypatch, fake_plugins):
    noisy = lambda p: 0.08 * (-1) ** p  # noqa: E731
    pool, report = compare_with(monkeypatch, noisy, 1e9)
    assert report.looks == LOOKS and len(pool.ran) == sequential.MAX_PROCESSES
    (v,) = report.verdicts
    assert v.verdict == "inconclusive" and v.processes == sequential.MAX_PROCESSES
    pool, report = compare_with(monkeypatch, noisy, 0.0)
    assert report.looks == (3,) and len(pool.ran) == 3
    assert "within the budget of 0 s" in " ".join(report.verdicts[0].notes)
    pool, report = compare_with(monkeypatch, noisy, None)  # a fixed count: no looks
    assert report.looks == () and len(pool.ran) == 3 and report.verdicts[0].processes == 3


def test_a_budget_spent_says_what_budget_reaches_the_next_look_and_that_one_does(
    monkeypatch, fake_plugins, tmp_path
):
    import json

    from gemmreg.reporting import runs
    from gemmreg.timing import rejudging

    noisy = lambda p: 0.08 * (-1) ** p  # noqa: E731 (never decided)
    _, report = compare_with(monkeypatch, noisy, 10.0, seconds_per_process=2.0)
    assert report.looks == (3, 5) and report.look_s == (6.0, 10.0)  # 2 s a process
    (v,) = report.verdicts
    assert v.verdict == "inconclusive"
    note = " ".join(v.notes)
    assert "they took 10 s, so 5 more at that pace need --budget 20 or more" in note
    # that budget, at the same pace, reaches the processes the note promised
    pool, again = compare_with(monkeypatch, noisy, 20.0, seconds_per_process=2.0)
    assert again.looks[-1] >= 5 + 5 and len(pool.ran) == again.looks[-1]
    assert "so 10 more at that pace need --budget 40 or more" in " ".join(again.verdicts[0].notes)
    # a run saved before the looks' seconds were kept says what happened, without the pace
    runs.write_run(tmp_path, {}, [report], False)
    data = json.loads((tmp_path / "run.json").read_text())
    del data["content_sha256"], data["reports"][0]["look_s"]
    (tmp_path / "run.json").write_text(json.dumps(data))
    _, (old,), _ = runs.load_run(tmp_path, verify=False)
    (judged,) = rejudging.rejudge(old, stats.DEFAULT_MARGIN).verdicts
    assert old.look_s == () and judged.verdict == "inconclusive"
    assert "(another batch would not have fit)" in " ".join(judged.notes)


def test_a_sequential_run_is_saved_read_judged_again_and_shown_with_its_counts(
    monkeypatch, fake_plugins, tmp_path
):
    from gemmreg.reporting import render_compare, render_verdicts, runs
    from gemmreg.timing import rejudging

    _, report = compare_with(
        monkeypatch, lambda p: math.log(1.03) + 0.015 * (-1) ** p * (1 + p % 3) / 2, 1e9
    )
    runs.write_run(tmp_path, {}, [report], False)
    _, (loaded,), _ = runs.load_run(tmp_path)
    assert loaded.looks == report.looks and loaded.budget_s == 1e9
    assert loaded.verdicts == report.verdicts
    # judged again at the looks it took: the same words, counts and levels
    assert rejudging.rejudge(loaded, stats.DEFAULT_MARGIN).verdicts == report.verdicts
    (row,) = render_verdicts.verdict_rows([loaded])
    assert row["processes"] == report.verdicts[0].processes
    assert "procs" in render_verdicts.verdict_table([loaded], "table")
    assert loaded.look_s == report.look_s and len(loaded.look_s) == len(loaded.looks)
    assert re.search(
        r"looks at 3 \(\d+ s\), 6 \(\d+ s\)", render_compare.compare_table(loaded, "table")
    )


def test_a_run_saved_before_looks_reads_as_a_fixed_count(monkeypatch, fake_plugins, tmp_path):
    import json

    from gemmreg.reporting import render_verdicts, runs

    _, report = compare_with(monkeypatch, lambda p: math.log(3.0), None)
    runs.write_run(tmp_path, {}, [report], False)
    data = json.loads((tmp_path / "run.json").read_text())
    del data["content_sha256"]  # runs saved before looks were saved before checksums too
    for saved in data["reports"]:  # as a run saved before they were recorded
        del saved["looks"], saved["budget_s"]
        for v in saved["verdicts"]:
            del v["processes"]
    (tmp_path / "run.json").write_text(json.dumps(data))
    _, (old,), _ = runs.load_run(tmp_path)
    assert old.looks == () and old.verdicts[0].processes is None
    assert render_verdicts.verdict_rows([old])[0]["processes"] is None


def test_which_runs_are_sequential_and_what_they_start_with():
    from gemmreg.timing.timing_options import timing_options

    gpu = timing_options(True)  # compare: one point, a longer budget than a sweep's point
    assert (gpu.budget_s, gpu.processes) == (
        3 * sequential.DEFAULT_BUDGET_S,
        sequential.FIRST_BATCH,
    )
    assert timing_options(True, sweep=True).budget_s == sequential.DEFAULT_BUDGET_S
    assert (
        timing_options(True, processes=5).budget_s,
        timing_options(True, processes=5).processes,
    ) == (None, 5)
    assert timing_options(True, fixed=True).budget_s is None  # a Ray run
    assert timing_options(True, fixed=True).processes == 5
    cpu = timing_options(False)
    assert (cpu.budget_s, cpu.processes) == (None, 3)
    asked = timing_options(False, budget_s=0.0)
    assert (asked.budget_s, asked.processes) == (0.0, sequential.FIRST_BATCH)


def test_a_point_is_timed_with_the_budget_and_its_progress_has_no_total(monkeypatch):
    from gemmreg.contract import backend
    from gemmreg.fanout import sweeping
    from gemmreg.reporting import timing_lines
    from gemmreg.timing.timing_options import timing_options

    seen = {}
    monkeypatch.setattr(sweeping.comparing, "run_compare", lambda *a, **kw: seen.update(kw))
    timing = timing_options(False, budget_s=12.0)
    lines: list[str] = []
    sweeping.time_point([], Problem(m=8, n=8, k=8), timing, backend.current(), lines.append)
    assert seen["budget_s"] == 12.0 and seen["processes"] == sequential.FIRST_BATCH
    on_run, _ = timing_lines.progress_hooks(timing, lines.append)
    on_run(ProcessRun(kernel="k", process=6, status="timed", round_ms=(1.0,)))
    assert "process 7: k: timed" in lines[-1]
    on_run, _ = timing_lines.progress_hooks(timing_options(False), lines.append)
    on_run(ProcessRun(kernel="k", process=1, status="timed", round_ms=(1.0,)))
    assert "process 2/3: k: timed" in lines[-1]


def test_a_batch_is_announced_and_counted_by_the_meter():
    import io

    from gemmreg.reporting import timing_lines
    from gemmreg.reporting.progress import Meter

    stream = io.StringIO()
    meter = Meter([1.0] * 6, "process runs", stream=stream, live=False)
    for _ in range(6):
        meter.advance_silently(1.0)
    timing_lines.batch_hook(stream.write, "", meter)(1, 3, 2)
    assert meter.total == 12 and len(meter.remaining) == 6
    assert "look 1 left a pair undecided: 3 more processes" in stream.getvalue()
    lines: list[str] = []
    timing_lines.batch_hook(lines.append, "[2/20] ")(2, 6, 3)  # bench: a line, no meter
    assert lines == ["  [2/20] look 2 left a pair undecided: 6 more processes"]


def test_batches_spread_over_gpus_keep_each_process_on_its_gpu(monkeypatch, fake_plugins):
    # compare --devices: every batch's processes go through the same lanes
    pool, report = compare_with(monkeypatch, lambda p: 0.08 * (-1) ** p, 1e9, gpus=(0, 1))
    assert report.looks == LOOKS and sorted(pool.ran) == list(range(sequential.MAX_PROCESSES))
    assert [(r.process, r.device_index) for r in report.records] == [
        (p, p % 2) for p in range(sequential.MAX_PROCESSES)
    ]


def test_a_late_looks_level_over_many_pairs_is_not_printed_as_100_percent():
    """Fifteen pairs at the fourth look are judged at 99.9987%; four digits
    wrote "interval at that look's 100%"."""
    level = stats.family_confidence(sequential.look_confidence(4, stats.CONFIDENCE), 15)
    note = sequential.decided_note(4, 24, level)
    assert "100%" not in note and note.endswith("interval at that look's 99.999%")
