"""A kernel's ``available()`` and capability ``constraint`` run in gemmreg's
own process after discovery: whatever they do (raise KeyboardInterrupt or
SystemExit, call ``os._exit``, hang) is that kernel's reason, one line, and
the rest of the table survives; a real Ctrl-C still stops gemmreg."""

from __future__ import annotations

import json
import os
import signal
import threading

import attrs
import pytest
from conftest import run_gemmreg
from fake_plugins import misbehaving_availability as fakes
from gemmreg.contract.records import Problem
from gemmreg.discovery.availability import unavailable_reason, unsupported_reason
from test_hostile_plugins import WAIT_S, plugin_env

REASONS = {
    "INTERRUPTS": "its availability check raised KeyboardInterrupt(from available()): "
    "raised by plugin code, not a Ctrl-C",
    "EXITS": "its availability check raised SystemExit(3): plugin code called sys.exit",
    "EXITS_HARD": "plugin 'fake_available_exits_hard' called os._exit(0) while running "
    "its availability check",
    "HANGS": "its availability check did not return within 1 s",
}


@pytest.mark.parametrize("name", sorted(REASONS))
def test_a_misbehaving_availability_check_is_the_kernel_s_reason(monkeypatch, name):
    monkeypatch.setenv("GEMMREG_LOAD_TIMEOUT_S", "1")
    real_exit = os._exit
    assert unavailable_reason(getattr(fakes, name)) == REASONS[name]
    assert os._exit is real_exit


def test_a_constraint_calling_os_exit_is_the_problem_s_reason():
    reason = unsupported_reason(fakes.CONSTRAINT_EXITS_HARD, Problem(m=5, n=6, k=7))
    assert reason == (
        "plugin 'fake_constraint_exits_hard' called os._exit(0) while running "
        "its capability constraint"
    )


def _constraint_asked(answer_after: threading.Event | None):
    """A spec whose constraint counts its calls and, given an event, waits for
    it (past any load timeout the test sets) before saying every problem is fine."""
    asked: list[Problem] = []

    def constraint(problem: Problem) -> None:
        asked.append(problem)
        if answer_after is not None:
            answer_after.wait()

    capabilities = attrs.evolve(fakes.CONSTRAINT_HANGS.capabilities, constraint=constraint)
    return attrs.evolve(fakes.CONSTRAINT_HANGS, capabilities=capabilities), asked


def test_a_constraint_that_hung_is_not_asked_again_and_its_reason_answers_every_problem(
    monkeypatch,
):
    monkeypatch.setenv("GEMMREG_LOAD_TIMEOUT_S", "0.2")
    release = threading.Event()
    hangs, asked = _constraint_asked(release)
    answers, asked_fine = _constraint_asked(None)
    problems = [Problem(m=5, n=6, k=7), Problem(m=8, n=9, k=10), Problem(m=5, n=6, k=7)]
    try:
        reasons = [unsupported_reason(hangs, problem) for problem in problems]
        fine = [unsupported_reason(answers, problem) for problem in problems]
    finally:
        release.set()  # the one stuck thread ends with the test
    assert reasons == ["its capability constraint did not return within 0.2 s"] * 3
    assert asked == problems[:1]
    assert fine == [None] * 3  # another kernel's constraint, answering, is asked every time
    assert asked_fine == problems


def test_check_asks_a_hanging_constraint_once_and_skips_the_kernel_s_cases_with_its_reason(
    tmp_path,
):
    calls = tmp_path / "constraint-calls"
    env = plugin_env(
        "misbehaving_availability:CONSTRAINT_HANGS",
        "good",
        GEMMREG_LOAD_TIMEOUT_S="1",
        **{fakes.CONSTRAINT_CALLS_ENV: str(calls)},
    )
    done = run_gemmreg(
        "check", "fake_good", "fake_constraint_hangs", "--dtype", "fp32", "--format", "json",
        env=env, timeout=WAIT_S,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    cases = json.loads(done.stdout)["cases"]
    skipped = [c for c in cases if c["kernel"] == "fake_constraint_hangs" and c["status"] == "skip"]
    assert len(skipped) > 1  # one hang answered every one of the kernel's cases
    assert {c["reason"] for c in skipped} == {"its capability constraint did not return within 1 s"}
    assert len(calls.read_text().splitlines()) == 1
    assert any(c["kernel"] == "fake_good" and c["status"] == "pass" for c in cases)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals")
def test_a_real_ctrl_c_during_a_hanging_availability_check_still_interrupts():
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            unavailable_reason(fakes.HANGS)
    finally:
        timer.cancel()


@pytest.fixture(scope="module")
def listed():
    specs = [f"misbehaving_availability:{name}" for name in sorted(REASONS)]
    env = plugin_env(*specs, "good", GEMMREG_LOAD_TIMEOUT_S="1")
    return run_gemmreg("list", "--format", "json", env=env, timeout=WAIT_S)


def test_list_survives_every_misbehaving_availability_check(listed):
    assert listed.returncode == 0, listed.stderr[-2000:]
    rows = {row["name"]: row for row in json.loads(listed.stdout)["plugins"]}
    assert rows["fake_good"]["available"] is True
    for name, reason in REASONS.items():
        row = rows[getattr(fakes, name).name]
        assert (row["available"], row["unavailable_reason"]) == (False, reason)


def test_check_survives_a_constraint_calling_os_exit_and_saves_its_run(tmp_path):
    env = plugin_env("misbehaving_availability:CONSTRAINT_EXITS_HARD", "good")
    out = tmp_path / "run"
    done = run_gemmreg(
        "check", "fake_good", "fake_constraint_exits_hard", "--dtype", "fp32", "--format", "json",
        "--out", str(out), env=env, timeout=WAIT_S,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    cases = json.loads(done.stdout)["cases"]
    reason = "called os._exit(0) while running its capability constraint"
    skipped = [c for c in cases if c["status"] == "skip" and reason in c.get("reason", "")]
    assert {c["kernel"] for c in skipped} == {"fake_constraint_exits_hard"}
    assert any(c["kernel"] == "fake_good" for c in cases)
    assert (out / "check.json").is_file()
