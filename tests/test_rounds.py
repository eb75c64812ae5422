"""The round scheduler: orders, equal exposure, dropped rounds, stopping."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from gemmreg.timing import rounds
from gemmreg.timing.rounds import Round, StopRule
from gemmreg.workers.task_results import KernelTiming


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_williams_rows_balance_positions_and_neighbours(n):
    rows = rounds.williams_rows(n)
    assert all(sorted(row) == list(range(n)) for row in rows)
    for position in range(n):  # every kernel in every position equally often
        counts = Counter(row[position] for row in rows)
        assert len(set(counts.values())) == 1 and len(counts) == n
    pairs = Counter((row[i], row[i + 1]) for row in rows for i in range(n - 1))
    if n > 1:  # every ordered pair of neighbours equally often
        assert len(pairs) == n * (n - 1) and len(set(pairs.values())) == 1


def test_orders_rotate_replay_and_differ_between_processes():
    names = ["torch_ref", "triton_tuned", "triton_grouped"]
    first = rounds.round_orders(names, 12, seed=rounds.order_seed("4096x4096x4096", 0, 1))
    again = rounds.round_orders(names, 12, seed=rounds.order_seed("4096x4096x4096", 0, 1))
    other = rounds.round_orders(names, 12, seed=rounds.order_seed("4096x4096x4096", 1, 1))
    assert first == again
    assert first != other
    # Over a full square each kernel opens the same number of rounds.
    opened = Counter(order[0] for order in first[:6])
    assert set(opened.values()) == {2}


def test_a_kernel_is_not_first_in_every_process():
    """The old order seed put torch_ref first in 2 of 3 processes at all 8 points."""
    firsts = Counter(
        rounds.round_orders(["torch_ref", "triton_tuned"], 1, rounds.order_seed(label, p, 7))[0][0]
        for label in ("a", "b", "c", "d", "e", "f", "g", "h")
        for p in range(3)
    )
    assert set(firsts) == {"torch_ref", "triton_tuned"}


def make_round(a, b, dropped=None, order=("a", "b")):
    return Round(
        order=order,
        slot_ms={"a": a, "b": b},
        slot_wall_s={"a": 0.01, "b": 0.01},
        samples={"a": 10, "b": 10},
        dropped=dropped,
    )


def test_a_dropped_round_counts_for_no_kernel():
    taken = [make_round(1.0, 1.0), make_round(1.0, 2.0, dropped="hw_thermal_slowdown active")]
    assert rounds.log_ratios(taken, "a", "b") == [0.0]
    assert rounds.process_estimate(taken, "a", "b") == 0.0
    assert rounds.exposure(taken, ["a", "b"])["a"] == rounds.exposure(taken, ["a", "b"])["b"]


def test_paired_log_ratio_cancels_shared_drift():
    # Both kernels slow down together over the rounds (the GPU heats up): the
    # paired ratio stays exact.
    taken = [make_round(1.0 * (1 + 0.01 * r), 0.5 * (1 + 0.01 * r)) for r in range(20)]
    assert rounds.process_estimate(taken, "a", "b") == pytest.approx(math.log(2))
    assert rounds.widest_halfwidth(taken, ["a", "b"]) == pytest.approx(0, abs=1e-12)


RULE = StopRule(min_rounds=5, min_kernel_s=0.0, max_rounds=50, max_time_s=10.0)


def test_stopping_waits_for_the_minimum_then_for_a_narrow_interval():
    steady = [make_round(1.0, 1.0) for _ in range(4)]
    assert rounds.stop_reason(steady, ["a", "b"], RULE, 0.1) is None  # too few rounds
    steady.append(make_round(1.0, 1.0))
    assert rounds.stop_reason(steady, ["a", "b"], RULE, 0.1).startswith("steady")
    noisy = [make_round(1.0, v) for v, _ in zip(itertools.cycle([0.8, 1.3]), range(10))]
    assert rounds.stop_reason(noisy, ["a", "b"], RULE, 0.1) is None
    assert rounds.stop_reason(noisy, ["a", "b"], RULE, 11.0) == "time cap (10 s)"
    assert rounds.stop_reason(noisy * 5, ["a", "b"], RULE, 0.1) == "round cap (50)"


def _noisy_pair(ratio: float, spread: float, n: int) -> list[Round]:
    """b takes ``ratio`` times as long as a, with a round-to-round wobble of +-spread."""
    wobble = itertools.islice(itertools.cycle([1 - spread, 1 + spread, 1.0]), n)
    return [make_round(1.0, ratio * w) for w in wobble]


def test_a_pair_decisively_apart_stops_without_the_fine_precision():
    """3x apart and known to about +-1.8%: no verdict margin is near, so
    the process stops after its minimum rather than sampling on to +-0.5%."""
    far = _noisy_pair(3.0, 0.008, 10)
    assert rounds.widest_halfwidth(far, ["a", "b"]) > RULE.target_halfwidth
    assert "decisively apart" in rounds.stop_reason(far, ["a", "b"], RULE, 0.1)


def test_a_near_pair_still_samples_to_the_fine_precision():
    """Two kernels 2% apart, or identical ones, with the same wobble: the
    verdict turns on the last half-percent, so sampling goes on."""
    for ratio in (1.0, 1.02):
        near = _noisy_pair(ratio, 0.008, 10)
        assert rounds.stop_reason(near, ["a", "b"], RULE, 0.1) is None


def test_the_minimum_of_timed_work_binds_close_pairs_only():
    """With 10 rounds of 10 samples of 1 and 3 ms (0.1 s timed for the
    shorter kernel) and a minimum of 1 s of timed work: a pair 3x apart and
    known to +-2% stops (its verdict is plain); the same rounds of a pair 2%
    apart, or of identical kernels, go on until the minimum is met."""
    rule = StopRule(min_rounds=5, min_kernel_s=1.0, max_rounds=500, max_time_s=10.0)
    far = _noisy_pair(3.0, 0.008, 10)
    assert rounds.all_decisive(far, ["a", "b"], rule)
    assert "decisively apart" in rounds.stop_reason(far, ["a", "b"], rule, 0.1)
    for ratio in (1.0, 1.02):
        near = _noisy_pair(ratio, 0.0, 10)  # known exactly: only the minimum holds it
        assert not rounds.all_decisive(near, ["a", "b"], rule)
        assert rounds.stop_reason(near, ["a", "b"], rule, 0.1) is None
        assert rounds.stop_reason(near * 10, ["a", "b"], rule, 0.1).startswith("steady")


def test_a_decisive_pair_that_is_still_vague_samples_on():
    """Far apart but known only to +-10%: not settled (the printed speedup
    would be worth little)."""
    vague = _noisy_pair(3.0, 0.3, 10)
    assert rounds.stop_reason(vague, ["a", "b"], RULE, 0.1) is None


def test_one_near_pair_keeps_a_three_kernel_process_going():
    three = [
        Round(
            order=("a", "b", "c"),
            slot_ms={"a": 1.0, "b": 3.0 * w, "c": 1.02 * w2},  # c is near a
            slot_wall_s={"a": 0.01, "b": 0.01, "c": 0.01},
            samples={"a": 10, "b": 10, "c": 10},
        )
        for w, w2 in itertools.islice(
            zip(itertools.cycle([0.992, 1.008, 1.0]), itertools.cycle([1.008, 0.992, 1.0])), 12
        )
    ]
    assert rounds.stop_reason(three, ["a", "b", "c"], RULE, 0.1) is None


def test_dropped_rounds_do_not_count_towards_the_minimum():
    taken = [make_round(1.0, 1.0, dropped="throttled") for _ in range(10)]
    assert rounds.stop_reason(taken, ["a", "b"], RULE, 0.1) is None


def test_the_minimum_rounds_come_before_the_time_cap():
    """A loaded machine once stopped a process after 5 samples: the cap was
    checked before the minimum."""
    two = [make_round(1.0, 1.0) for _ in range(2)]
    assert rounds.stop_reason(two, ["a", "b"], RULE, 11.0) is None
    assert rounds.stop_reason(two, ["a", "b"], RULE, 101.0).startswith("hard cap")


class _Stub:
    def __init__(self, name: str, round_ms: list[float]):
        self.name, self.result = name, KernelTiming(round_ms=round_ms)
        self.calls = 0

    def call(self) -> None:
        self.calls += 1


def test_graph_replays_are_not_taken_when_a_call_is_long():
    """Past GRAPH_MAX_CALL_MS launch cost is noise: no graph is even built."""
    from gemmreg.timing import regime_graph, timing

    long_ = [_Stub("slow", [regime_graph.GRAPH_MAX_CALL_MS * 2]), _Stub("fast", [0.01])]
    assert regime_graph.graph_rounds(long_, timing.GPU_POLICY, seed=1) == []
    assert all(not k.result.regime_errors and k.calls == 0 for k in long_)
    # Short calls do get graphs: on this CPU machine building one fails, and says so.
    short = [_Stub("a", [0.01]), _Stub("b", [0.02])]
    regime_graph.graph_rounds(short, timing.GPU_POLICY, seed=1)
    assert all(k.result.regime_errors[regime_graph.REGIME] for k in short)


def test_checks_take_as_many_calls_as_their_budget_allows():
    from gemmreg.timing.device_activity import calls_for_budget

    assert calls_for_budget(0.370, 0.5, 2, 5) == 2  # a 370 ms call: the least
    assert calls_for_budget(0.1, 0.5, 2, 5) == 5
    assert calls_for_budget(7.5e-6, 0.2, 5, 40) == 40  # a 7.5 us call: the most
    assert calls_for_budget(0.02, 0.2, 5, 40) == 10
    assert calls_for_budget(0.0, 0.2, 5, 40) == 40
