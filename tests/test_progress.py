"""Progress with elapsed time and an ETA: the estimator as a pure
function, the meter with a clock of its own (no test here waits or times
anything), and the warning before a run estimated to be long."""

from __future__ import annotations

import io

import pytest
from gemmreg.checking import matrix
from gemmreg.commands.check_command import case_weights
from gemmreg.contract.options import parse_shapes
from gemmreg.contract.records import Problem
from gemmreg.reporting.progress import MIN_ITEMS_TO_CHOOSE, PLAIN_EVERY_S, Meter, eta_s
from gemmreg.timing import run_estimate, timing_options

# ---------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------


def test_no_eta_before_anything_finished_and_none_left_after_the_last():
    assert eta_s([], [1.0, 2.0]) is None
    assert eta_s([(1.0, 5.0)], []) == 0.0


def test_points_capped_by_time_cost_the_same_whatever_their_size():
    """A GPU sweep: each point takes ~10 s however large: the mean per item
    predicts better than a rate per unit of work, and is chosen."""
    done = [(1.0, 10.0), (8.0, 10.5), (27.0, 9.5)]
    assert eta_s(done, [64.0, 125.0]) == pytest.approx(20.0)


def test_interpreted_points_cost_in_proportion_to_their_work():
    """The interpreter: time grows with 2MNK, so the per-work rate is chosen."""
    done = [(1.0, 2.0), (8.0, 16.0), (27.0, 54.0)]
    assert eta_s(done, [64.0, 125.0]) == pytest.approx(2.0 * (64 + 125))


def test_before_enough_items_the_callers_preference_chooses():
    done = [(1.0, 2.0), (8.0, 16.0)]
    assert len(done) < MIN_ITEMS_TO_CHOOSE
    assert eta_s(done, [64.0]) == pytest.approx(9.0)  # the mean of 2 and 16
    assert eta_s(done, [64.0], prefer_work=True) == pytest.approx(128.0)


def test_items_without_work_are_counted_per_item():
    assert eta_s([(0.0, 3.0), (0.0, 5.0)], [0.0, 0.0, 0.0], prefer_work=True) == 12.0


# ---------------------------------------------------------------------------
# The meter, with an injected clock
# ---------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_in_a_log_each_finished_item_prints_elapsed_and_eta():
    clock, stream = Clock(), io.StringIO()
    meter = Meter([1.0, 1.0, 1.0, 1.0], "points", stream=stream, clock=clock, live=False)
    meter.line("[1/4] starting")
    clock.now += 83
    meter.advance()
    clock.now += 40
    meter.advance(1.0, "  a point's line")
    assert stream.getvalue().splitlines() == [
        "[1/4] starting",
        "progress: 1/4 points, elapsed 1m23s, ETA ~4m09s",
        "  a point's line  [2/4 points, elapsed 2m03s, ETA ~2m03s]",
    ]
    assert "\r" not in stream.getvalue()


def test_before_the_first_item_the_runs_estimate_is_the_eta():
    clock, stream = Clock(), io.StringIO()
    meter = Meter([1.0, 1.0], "points", stream=stream, clock=clock, live=False, estimate_s=3600)
    clock.now += 600
    assert meter.status() == "0/2 points, elapsed 10m00s, ETA ~50m00s"
    clock.now += 3000
    assert meter.status() == "0/2 points, elapsed 1h00m"  # overrun: no ETA rather than ~0s


def test_on_a_terminal_one_bar_is_redrawn_below_the_lines():
    clock, stream = Clock(), io.StringIO()
    meter = Meter([1.0, 1.0], "points", stream=stream, clock=clock, live=True)
    meter.line("first")
    clock.now += 30
    meter.advance()
    meter.line("second")
    meter.close()
    text = stream.getvalue()
    assert text.startswith("first\n[")
    assert "\r\x1b[K" in text  # the bar is cleared before each new line
    # What a terminal shows at the end: the lines, then the bar's last state once.
    shown = [part.split("\r\x1b[K")[-1] for part in text.split("\n")]
    assert shown[:2] == ["first", "second"]
    assert shown[2].startswith("[" + "#" * 12 + "." * 12 + "] 1/2 points, elapsed 30s, ETA ~30s")
    assert text.endswith("\n") and text.count("ETA") == 2  # none before an item ends


def test_a_stream_that_is_a_terminal_gets_the_bar_and_one_that_is_not_gets_lines():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert Meter([1.0], "x", stream=Tty()).live
    assert not Meter([1.0], "x", stream=io.StringIO()).live


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0, "0s"), (59.4, "59s"), (83, "1m23s"), (3599, "59m59s"), (7980, "2h13m"), (273600, "3d04h")],
)
def test_durations_are_short(seconds, shown):
    assert run_estimate.duration(seconds) == shown


# ---------------------------------------------------------------------------
# The estimate before a run, and its warning
# ---------------------------------------------------------------------------


def test_an_interpreted_call_scales_with_2mnk_from_16_s_at_512_cubed():
    assert run_estimate.interpreted_call_s(Problem(m=512, n=512, k=512)) == 16.0
    assert run_estimate.interpreted_call_s(Problem(m=1024, n=512, k=512)) == 32.0


def test_the_readmes_sweep_under_the_interpreter_is_announced_as_hours():
    """``bench torch_ref triton_grouped --shape 256:2048:256`` on the CPU."""
    problems = [Problem(m=m, n=n, k=k, dtype="fp16") for m, n, k in parse_shapes("256:2048:256")]
    policy = timing_options.policy_for(gpu=False)
    estimate = run_estimate.run_s(problems, [False, True], 3, policy)
    assert estimate > 10 * 3600
    warning = run_estimate.long_run_warning(estimate, len(problems), 3, 1, "bench")
    assert warning is not None and warning.startswith("warning: this bench may take ~")
    assert "8 points x 3 processes, 1 kernel under Triton's interpreter" in warning
    assert "--processes 1" in warning and "fewer or smaller shapes" in warning


def test_a_small_gpu_sweep_is_not_announced():
    problems = [Problem(m=s, n=s, k=s) for s in (1024, 2048, 4096)]
    policy = timing_options.policy_for(gpu=True, max_time_s=timing_options.BENCH_MAX_TIME_S)
    estimate = run_estimate.run_s(problems, [False] * 6, 5, policy)
    # The H200 figure this is calibrated on: ~4.8 s per process of 6 kernels.
    assert estimate == pytest.approx(3 * 5 * (1.0 + 6 * (0.25 + 0.4)))
    assert run_estimate.long_run_warning(estimate, 3, 5, 0, "bench") is None


def test_a_long_gpu_sweep_suggests_a_shorter_cap_not_fewer_repeats():
    warning = run_estimate.long_run_warning(3 * 3600, 500, 5, 0, "bench")
    assert warning is not None and "~3h00m" in warning and "--max-time 0.5" in warning
    assert "interpreter" not in warning


def test_in_a_log_items_without_a_line_print_progress_at_most_every_interval():
    clock, stream = Clock(), io.StringIO()
    meter = Meter([1.0] * 5, "cases", stream=stream, clock=clock, live=False)
    clock.now += 1
    meter.tick()  # 1 s after the start: too soon for a line
    clock.now += PLAIN_EVERY_S
    meter.tick()  # past the interval: a line
    clock.now += 1
    meter.tick()
    meter.tick()
    clock.now += 1
    meter.tick()  # the last item: always a line
    assert stream.getvalue().splitlines() == [
        "progress: 2/5 cases, elapsed 11s, ETA ~16s",
        "progress: 5/5 cases, elapsed 13s, ETA ~0s",
    ]
    assert len(meter.done) == 5


# Sweeps as they ran: each point's problem and the elapsed seconds at which it
# finished (the progress lines' clock), and the kernels' execution. The ETA
# after each finished point must be within 2x of the time that was left.
RECORDED = {
    # `gemmreg bench triton_baseline triton_grouped --shape 32:128:*2` on this
    # project's loaded 2-core CPU machine (Triton interpreted, 3 processes); it
    # said "ETA ~22m20s" after its first point when a point's work was its 2MNK
    "cpu-interpreted": (
        [(32, 32, 32, "fp32"), (64, 64, 64, "fp32"), (128, 128, 128, "fp32")],
        [18.0, 31.0, 44.0],
        [True, True],
        3,
        False,
    ),
    # `gemmreg bench torch_ref triton_tuned` over Llama 3 8B's 12 projections of
    # 1, 16 and 128 tokens, bf16, 5 processes, on the H200
    # (evidence/2026-12-04-h200-tma-split-k-llm-decode/bf16-1-16-128: the
    # console's progress lines)
    "h200-llm-decode": (
        [
            (m, n, k, "bf16")
            for m in (1, 16, 128)
            for n, k in ((4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336))
        ],
        [29.0, 38.8, 62.9, 86.3, 101.0, 108.9, 131.6, 156.9, 182.0, 200.4, 221.9, 245.9],
        [False, False],
        5,
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_a_recorded_sweeps_eta_is_within_2x_after_each_point(name):
    shapes, finished, interpreted, processes, gpu = RECORDED[name]
    policy = timing_options.policy_for(gpu, None, None, None)
    problems = [Problem(m=m, n=n, k=k, dtype=dtype) for m, n, k, dtype in shapes]
    works = [run_estimate.point_s(p, interpreted, processes, policy) for p in problems]
    seconds = [b - a for a, b in zip([0.0, *finished[:-1]], finished, strict=True)]
    for i in range(1, len(problems)):
        eta = eta_s(list(zip(works[:i], seconds[:i], strict=True)), works[i:], prefer_work=None)
        left = finished[-1] - finished[i - 1]
        assert eta is not None and 0.5 <= eta / left <= 2.0, (i, eta, left)


def test_an_item_finished_by_its_key_counts_its_own_work():
    """A sweep names a finished point by its 2MNK; the meter counts the
    point's estimated seconds, whatever order the points finish in."""
    now = [0.0]
    meter = Meter([10.0, 20.0, 30.0], "points", clock=lambda: now[0], live=False,
                  stream=io.StringIO(), keys=[1.0, 2.0, 3.0])  # fmt: skip
    now[0] = 5.0
    meter.advance_silently(3.0)  # the last point first
    assert meter.done == [(30.0, 5.0)] and [w for _, w in meter.remaining] == [10.0, 20.0]
    with pytest.raises(ValueError):
        Meter([1.0, 2.0], "points", keys=[1.0])


def _arrival_seconds(works: list[float]) -> list[float]:
    """Seconds per finished case as a GPU check's meter sees them: a tuned
    large case (512^3 and up) alone in 15 s, the small ones in batches of
    five whose results land together, the batch's second on its first."""
    seconds, in_batch = [], 0
    for work in works:
        if work >= 2.5e8:
            seconds.append(15.0)
            in_batch = 0
        else:
            seconds.append(1.0 if in_batch % 5 == 0 else 1e-5)
            in_batch += 1
    return seconds


def test_a_gpu_checks_eta_counts_cases_whatever_their_work():
    """On a GPU a check case's time is compiles, trials and the float64
    reference, not its 2MNK, and results land in batches: weighed by work,
    the near-zero seconds of a batch's later small cases make the per-work
    rate look right, and the full matrix's 2^31-offset case (100 times any
    other's work) then reads as most of an hour, as a five-minute check's ETA did.
    Counted as cases, the ETA is the mean per case times the cases left.
    Under the interpreter a case weighs its work, as its time grows with it."""
    works = [float(c.problem.flops) for c in matrix.build("full", True, ("fp16",), ("rowmajor",))]
    largest, second = sorted(works)[-1], sorted(works)[-2]
    assert largest > 100 * second
    finished = 25
    seconds = _arrival_seconds(works[:finished])
    now = [0.0]
    meter = Meter(case_weights(works, gpu=True), "cases", clock=lambda: now[0], live=False,
                  stream=io.StringIO(), keys=works)  # fmt: skip
    for work, took in zip(works[:finished], seconds, strict=True):
        now[0] += took
        meter.advance_silently(work)  # a finished case is named by its 2MNK
    left = len(works) - finished
    eta = eta_s(meter.done, [w for _, w in meter.remaining])
    assert eta == pytest.approx(sum(seconds) / finished * left)
    assert eta < 60
    by_work = eta_s(list(zip(works[:finished], seconds, strict=True)), works[finished:])
    assert by_work is not None and by_work > 40 * 60
    assert case_weights(works, gpu=False) == works
