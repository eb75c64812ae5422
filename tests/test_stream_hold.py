"""The stream hold (``gemmreg.instruments.stream_hold``): every batch of GPU
samples is queued in full before the GPU runs it, in chunks the launch queue
holds, with Python's collector off while a chunk is queued; a batch whose
hold gave up is taken again in shorter chunks; holds that keep giving up,
or one that cannot be made, leave the clock on the lead spin with the
reason recorded, and the report says so."""

from __future__ import annotations

import gc
import time

import attrs
import pytest
from gemmreg.contract.backend import BackendInfo
from gemmreg.fanout.sweeping import clock_description
from gemmreg.instruments import stream_hold
from gemmreg.reporting import regression
from gemmreg.timing import clocks, compare_parts
from gemmreg.timing.timing_records import ProcessRecord
from test_gpu_clock import FakeTorch
from test_unlike_execution import unlike_report


class FakeHold:
    """Records where the holds and releases fall among the queued work; the
    first ``give_ups`` batches give up (each :meth:`clear` ends one)."""

    def __init__(self, log: list[tuple], give_ups: int = 0) -> None:
        self.log, self.give_ups = log, give_ups

    def hold(self) -> None:
        self.log.append(("hold",))

    def release(self) -> None:
        self.log.append(("release",))

    def timed_out(self) -> bool:
        return self.give_ups > 0

    def clear(self) -> None:
        self.log.append(("clear",))
        self.give_ups -= 1


def kinds(torch: FakeTorch) -> list[str]:
    return [entry[0] for entry in torch.log]


def test_a_held_batch_is_queued_in_full_then_released_and_read_once() -> None:
    torch = FakeTorch()
    clock = clocks.GpuClock(l2=None, torch=torch, hold=FakeHold(torch.log))
    values = clock.samples(lambda: torch.log.append(("call",)), 2)
    assert values == [1.0, 1.0] and clock.queued == ""
    sample = ["record", "call", "record"]
    assert kinds(torch) == ["hold", *sample * 2, "release", "synchronize"]


def test_a_long_batch_is_held_in_chunks_the_launch_queue_holds() -> None:
    torch = FakeTorch()
    clock = clocks.GpuClock(l2=None, torch=torch, hold=FakeHold(torch.log))
    count = stream_hold.MAX_SAMPLES * 2 + 3
    assert len(clock.samples(lambda: torch.log.append(("call",)), count)) == count
    log = kinds(torch)
    assert log.count("hold") == log.count("release") == 3 and log[-1] == "synchronize"
    first_release = log.index("release")
    assert log[:first_release].count("call") == stream_hold.MAX_SAMPLES
    assert log.count("synchronize") == 1  # the chunks run back to back, read once


def test_a_call_that_raises_still_releases_the_hold() -> None:
    torch = FakeTorch()
    clock = clocks.GpuClock(l2=None, torch=torch, hold=FakeHold(torch.log))

    def broken() -> None:
        raise RuntimeError("launch failed")

    with pytest.raises(RuntimeError, match="launch failed"):
        clock.samples(broken, 3)
    assert kinds(torch)[-1] == "release"  # the GPU is not left waiting on the gate


def test_a_batch_whose_hold_gave_up_is_taken_again_in_half_chunks_and_kept_held() -> None:
    torch = FakeTorch()

    class Numbered(torch.cuda.Event):  # a sample's figure is its start event's number
        def elapsed_time(self, end) -> float:
            return float(self.id)

    torch.cuda.Event = Numbered
    clock = clocks.GpuClock(l2=None, torch=torch, hold=FakeHold(torch.log, give_ups=1))
    count = stream_hold.MAX_SAMPLES  # one chunk, then two of half its length
    values = clock.samples(lambda: torch.log.append(("call",)), count)
    log = kinds(torch)
    cleared = log.index("clear")
    first, retake = log[:cleared], log[cleared + 1 :]
    assert first.count("hold") == 1 and first.count("call") == count
    assert retake.count("hold") == retake.count("release") == 2 and retake.count("call") == count
    assert retake[: retake.index("release")].count("call") == count // 2
    # the retake's samples are what count: its start events, numbered after the first try's
    assert values == [float(i) for i in range(2 * count + 1, 4 * count, 2)]
    assert clock.retaken == 1 and clock.queued == "" and clock.hold is not None
    assert clock.retakes[0].startswith(f"the host queued its slowest chunk ({count} samples) in ")
    torch.log.clear()
    clock.samples(lambda: None, 2)
    assert kinds(torch)[0] == "hold"  # later batches are still held


def test_holds_that_keep_giving_up_leave_the_spin_for_this_and_later_batches() -> None:
    torch = FakeTorch()
    clock = clocks.GpuClock(l2=None, torch=torch, hold=FakeHold(torch.log, give_ups=10**6))
    calls: list[int] = []
    clock.samples(lambda: calls.append(1), 2)
    tries = stream_hold.GIVE_UPS
    assert len(calls) == 2 * (tries + 1)  # the held tries, then once behind the spin
    log = kinds(torch)
    assert log.count("hold") == tries and log.count("clear") == tries - 1
    assert log[log.index("spin") :].count("hold") == 0
    assert clock.hold is None and f"gave up {tries} times in a row" in clock.queued
    assert clock.retaken == tries
    torch.log.clear()
    clock.samples(lambda: None, 2)
    assert kinds(torch)[0] == "spin"


def test_a_retake_says_how_long_the_host_took_to_queue_the_slowest_chunk() -> None:
    """Whether the host stalled past the hold's timeout (about 0.14 s) or the
    give-up came from elsewhere (a full launch queue) shows in this figure."""
    torch = FakeTorch()
    clock = clocks.GpuClock(l2=None, torch=torch, hold=FakeHold(torch.log, give_ups=1))
    stalled = []

    def stall_once() -> None:
        if not stalled:
            stalled.append(1)
            time.sleep(0.02)

    clock.samples(stall_once, 3)
    (line,) = clock.retakes
    taken = float(line.split(" in ")[1].removesuffix(" ms"))
    assert line.startswith("the host queued its slowest chunk (3 samples) in ") and taken >= 20.0


def test_the_collector_is_off_while_a_chunk_is_queued_and_back_on_after() -> None:
    torch = FakeTorch()
    clock = clocks.GpuClock(l2=None, torch=torch, hold=FakeHold(torch.log))
    seen: list[bool] = []
    assert gc.isenabled()
    clock.samples(lambda: seen.append(gc.isenabled()), 3)
    assert seen == [False, False, False] and gc.isenabled()
    gc.disable()
    try:  # a caller that had it off keeps it off
        clock.samples(lambda: None, 1)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_comes_back_on_when_a_call_raises() -> None:
    torch = FakeTorch()
    clock = clocks.GpuClock(l2=None, torch=torch, hold=FakeHold(torch.log))

    def broken() -> None:
        raise RuntimeError("launch failed")

    with pytest.raises(RuntimeError):
        clock.samples(broken, 2)
    assert gc.isenabled()


def test_without_a_run_time_compiler_the_clock_spins_and_records_why() -> None:
    torch = FakeTorch()  # no GPU here: compile_kernel refuses
    clock = clocks.GpuClock(l2=None, torch=torch)
    assert clock.hold is None and clock.queued.startswith("no stream hold (")
    clock.samples(lambda: None, 1)
    assert kinds(torch)[0] == "spin"


class FakePinnedTorch:
    """Enough of torch for StreamHold: pinned int32 words, as plain lists."""

    int32 = "int32"

    class Words:
        def __init__(self, values: list[int], start: int = 0, stop: int | None = None) -> None:
            self.values, self.start = values, start
            self.stop = len(values) if stop is None else stop

        def __getitem__(self, part: slice) -> FakePinnedTorch.Words:
            return FakePinnedTorch.Words(
                self.values, self.start + part.start, self.start + part.stop
            )

        def fill_(self, value: int) -> None:
            for i in range(self.start, self.stop):
                self.values[i] = value

        def item(self) -> int:
            return self.values[self.start]

    def zeros(self, size: int, dtype: str, pin_memory: bool) -> Words:
        assert pin_memory and dtype == "int32"
        return FakePinnedTorch.Words([0] * size)


def test_each_hold_waits_for_the_next_release_count() -> None:
    launches: list[list] = []
    kernel = type("K", (), {"launch": lambda self, grid, block, args: launches.append(args)})()
    hold = stream_hold.StreamHold(FakePinnedTorch(), kernel)
    hold.hold()
    hold.release()
    hold.hold()
    assert [args[1] for args in launches] == [1, 2]  # the gate count each waits for
    assert launches[0][3] == stream_hold.TIMEOUT_KCYCLES
    assert hold.gate.item() == 1 and not hold.timed_out()
    hold.gave_up.fill_(1)  # what the kernel writes when it gives up
    assert hold.timed_out()
    hold.clear()  # before the batch is held again
    assert not hold.timed_out()


GPU = BackendInfo(kind="cuda", device="cuda", device_name="H200", triton_interpreter=False)


def held_report(queued: tuple[str, ...] = ()):
    report = attrs.evolve(
        unlike_report(), clock=clock_description(GPU, "H200", "clean"), l2="clean"
    )
    records = tuple(ProcessRecord(process=i, status="ok", queued=q) for i, q in enumerate(queued))
    return attrs.evolve(report, records=records)


def test_the_clock_line_says_held_and_names_a_process_that_was_not() -> None:
    assert "queued in full before the GPU runs it" in clock_description(GPU, "H200", "clean")
    records = [
        ProcessRecord(process=0, status="ok"),
        ProcessRecord(process=1, status="ok", queued="no stream hold (X)"),
    ]
    assert compare_parts.hold_note(records) == "; process 1: no stream hold (X)"
    assert compare_parts.hold_note(records[:1]) == ""


def test_the_clock_line_counts_the_batches_each_process_took_again() -> None:
    records = [
        ProcessRecord(process=0, status="ok", retakes=("queued in 150.0 ms",)),
        ProcessRecord(process=1, status="ok"),
        ProcessRecord(
            process=2, status="ok", retakes=("a", "b", "c"), queued="stream hold gave up 3 times"
        ),
    ]
    note = compare_parts.hold_note(records)
    assert note == (
        "; process 2: stream hold gave up 3 times"
        "; batches taken again after their hold gave up, in process 0 (1), 2 (3)"
        " (first: queued in 150.0 ms)"
    )


def test_runs_queued_differently_are_not_compared_silently() -> None:
    held, unheld = held_report(("", "")), held_report(("", "no stream hold (X)"))
    old = attrs.evolve(
        held,
        clock=held.clock.replace("queued in full before the GPU runs it", "queued behind a spin"),
    )
    assert regression.queueing(held) == "held"
    assert regression.queueing(unheld) == regression.queueing(old) == "spin"
    assert regression.queueing(unlike_report()) == ""  # the CPU

    def notes(before, after):
        changes = regression.compare_runs([before], [after], threshold_pct=5)
        return {n for c in changes for n in c.notes if n.startswith("UNLIKE QUEUEING")}

    (note,) = notes(old, held)
    assert note == (
        "UNLIKE QUEUEING: before's batches of samples were led by a spin (the host could show), "
        "after's held until queued"
    )
    assert notes(held, held) == set() and notes(old, unheld) == set()


def test_a_worker_compiles_the_hold_ahead_into_the_cache_the_clock_reads(monkeypatch):
    """compile_ahead asks for exactly the kernel make() asks for (compile_kernel
    caches per process on its arguments), and a compiler that fails is left for
    make() to report, not raised at worker start."""
    from gemmreg.contract import gpu_compile

    asked = []

    def compile_kernel(source, name):
        asked.append((source, name))
        raise RuntimeError("no NVRTC here")

    monkeypatch.setattr(gpu_compile, "compile_kernel", compile_kernel)
    stream_hold.compile_ahead()
    hold, why = stream_hold.make(FakePinnedTorch())
    assert asked == [(stream_hold.SOURCE, stream_hold.NAME)] * 2
    assert hold is None and "no NVRTC here" in why


def test_only_a_worker_that_may_time_compiles_the_hold_ahead():
    """Sessions (the timing pools) and batches holding a rounds task compile it
    at start-up; a check's batches of values and refusals never build a clock."""
    from gemmreg.commands import worker

    assert worker._may_time(None)
    assert worker._may_time([{"kind": "values"}, {"kind": "rounds"}])
    assert not worker._may_time([{"kind": "values"}, {"kind": "refusal"}])
    assert not worker._may_time([])
