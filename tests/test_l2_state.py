"""``--l2``: what the flush before each GPU sample leaves in L2 travels from
the options to every timing process and into the saved run, and two runs
timed under different states are not compared silently."""

from __future__ import annotations

import attrs
from gemmreg.contract.backend import BackendInfo
from gemmreg.contract.records import Problem
from gemmreg.fanout.sweeping import clock_description
from gemmreg.reporting import regression
from gemmreg.timing import compare_parts, timing_options
from test_unlike_execution import unlike_report

GPU = BackendInfo(kind="cuda", device="cuda", device_name="H200", triton_interpreter=False)


def asked(l2: str) -> compare_parts.Asked:
    return compare_parts.Asked(
        problem=Problem(m=8, n=8, k=8),
        processes=3,
        seed=1,
        clock=clock_description(GPU, "H200", l2),
        device_name="H200",
        gpu=True,
        margin=0.01,
        confidence=0.995,
        l2=l2,
    )


def test_the_default_is_clean_and_every_process_is_told_the_state():
    assert timing_options.timing_options(True).l2 == timing_options.DEFAULT_L2 == "clean"
    assert timing_options.timing_options(True, l2="dirty").l2 == "dirty"
    tasks = [asked("dirty").rounds_task(p, ["a", "b"]) for p in range(3)]
    assert {t.l2 for t in tasks} == {"dirty"}
    assert asked("clean").rounds_task(0, ["a", "b"]).l2 == "clean"


def test_the_clock_line_says_what_the_flush_left():
    assert "L2 flushed (read, left clean)" in clock_description(GPU, "H200", "clean")
    assert "L2 flushed (zeroed, left dirty)" in clock_description(GPU, "H200", "dirty")


def gpu_report(l2: str):
    return attrs.evolve(unlike_report(), clock=clock_description(GPU, "H200", l2 or "dirty"), l2=l2)


def notes(before, after):
    changes = regression.compare_runs([before], [after], threshold_pct=5)
    return {n for change in changes for n in change.notes if n.startswith("UNLIKE L2")}


def test_two_runs_under_different_l2_states_say_so_and_old_gpu_runs_count_as_dirty():
    clean, dirty, old = gpu_report("clean"), gpu_report("dirty"), gpu_report("")
    (note,) = notes(dirty, clean)
    assert note.startswith("UNLIKE L2 STATE: before timed after a flush that left L2 dirty")
    assert notes(clean, clean) == set() and notes(old, dirty) == set()
    assert notes(old, clean)  # saved before --l2 existed: its flush zeroed the buffer
    cpu = unlike_report()  # clock "test", no state: nothing to compare
    assert regression.l2_state(cpu) == "" and notes(cpu, cpu) == set()
