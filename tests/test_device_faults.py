"""GPU faults, simulated on the CPU: a device error is never a refusal, and a
kernel that loses its worker case after case does not cost a worker per case.

The fakes (tests/fake_plugins/device_faults.py) raise what torch raises after
an illegal-address store, or end their worker with ``os._exit``; a retiring
worker (poisoned context) is fake_worker.py's ``retire`` action.
"""

from __future__ import annotations

import json

import attrs
import pytest
from conftest import (
    HANG_LIMIT_S,
    check_in_one_worker,
    fake_worker_task,
    only_extra_plugins,
    run_gemmreg,
)
from gemmreg.checking import check_runner, refusals
from gemmreg.checking.matrix import Case
from gemmreg.contract import backend
from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import discover
from gemmreg.workers import isolation
from gemmreg.workers.sessions import Session, run_retrying
from gemmreg.workers.tasks import ColdTask
from test_hostile_plugins import plugin_env

TINY = Problem(m=5, n=6, k=7)
UNDECLARED = attrs.evolve(TINY, dtype="fp16")
"""Every fake here declares fp32 only: fp16 is the problem each must refuse."""
ILLEGAL = "AcceleratorError: CUDA error: an illegal memory access was encountered"


def _spec(fake_plugins, name):
    fake_plugins("device_faults")
    env = {"GEMMREG_PLUGINS": "none", "GEMMREG_EXTRA_PLUGINS": "fake_plugins.device_faults"}
    return discover(env=env).get(name).spec


# ---------------------------------------------------------------------------
# 1. A refusal is deliberate: a device error, or a device left unusable, is not one
# ---------------------------------------------------------------------------


def test_an_accelerator_error_on_the_undeclared_problem_is_not_a_refusal(fake_plugins):
    spec = _spec(fake_plugins, "fake_accelerator_error")
    with pytest.raises(refusals.NotARefusal) as raised:
        refusals.refusal_case(spec, UNDECLARED)
    assert str(raised.value) == (
        f"not a refusal: the device failed the plugin's launch ({ILLEGAL})"
    )


def test_a_device_error_wrapped_in_a_plain_exception_is_not_a_refusal_either(fake_plugins):
    spec = _spec(fake_plugins, "fake_wrapped_fault")
    with pytest.raises(refusals.NotARefusal, match="illegal memory access"):
        refusals.refusal_case(spec, UNDECLARED)


def test_a_clean_refusal_passes_unless_it_left_the_device_unusable(fake_plugins, monkeypatch):
    spec = _spec(fake_plugins, "fake_refuses")
    verdict = refusals.refusal_case(spec, UNDECLARED)
    assert verdict.passed is True
    assert verdict.reason.startswith("refused: UnsupportedProblem: dtype fp16 not declared")
    monkeypatch.setattr(backend, "device_healthy", lambda: False)  # as after a poisoned context
    with pytest.raises(refusals.NotARefusal, match="left the device unusable"):
        refusals.refusal_case(spec, UNDECLARED)


@pytest.mark.parametrize(
    ("error", "fault"),
    [
        (RuntimeError("CUDA error: device-side assert triggered"), "RuntimeError: CUDA error"),
        (RuntimeError("Triton Error [CUDA]: an illegal memory access was encountered"), "Triton"),
        (type("OutOfMemoryError", (RuntimeError,), {})("no memory"), "OutOfMemoryError"),
        (ValueError("dtype fp16 not declared"), ""),
        (NotImplementedError("layout padded is not supported"), ""),
    ],
)
def test_device_faults_are_told_from_deliberate_errors(error, fault):
    found = refusals.device_fault(error)
    assert (fault in found) if fault else found == ""


def test_through_a_worker_the_fault_is_an_error_row_and_a_clean_refusal_passes():
    with only_extra_plugins(["fake_plugins.device_faults"]):
        kernels = discover().select(["fake_accelerator_error", "fake_refuses"])
        results = check_in_one_worker(kernels, [Case(problem=TINY)])
    refusal = {r.kernel: r for r in results if r.kind == "refusal"}
    faulty = refusal["fake_accelerator_error"]
    assert faulty.status == "error", faulty
    assert faulty.reason == (
        f"NotARefusal: not a refusal: the device failed the plugin's launch ({ILLEGAL})"
    )
    assert faulty.id.endswith("-refuses-unsupported")
    assert refusal["fake_refuses"].status == "pass"
    assert check_runner.exit_code(results) == 1


# ---------------------------------------------------------------------------
# 2. Lost workers in a row: the rest of the kernel's cases are skipped
# ---------------------------------------------------------------------------


def test_after_lost_workers_in_a_row_the_rest_is_skipped_naming_the_last_error(fake_plugins):
    """A pass between two lost workers starts the count again: a kernel that
    crashes only on some shapes still shows each of them."""
    actions = ["exit", "ok", "exit", "retire", "exit", "ok", "ok"]
    outcomes = isolation.run_tasks(
        [fake_worker_task(action) for action in actions],
        skip_after_lost_workers=3,
        worker_module="fake_plugins.fake_worker",
    )
    statuses = [o.status for o in outcomes]
    assert statuses == ["crashed", "ok", "crashed", "error", "crashed", "skipped", "skipped"]
    for skipped in outcomes[5:]:
        assert skipped.cause == 4
        assert skipped.skip_rule == "3 cases in a row crashed their worker or left it unusable"
        assert skipped.error == "worker exited with code 3"


def test_without_the_rule_every_task_gets_a_worker(fake_plugins):
    outcomes = isolation.run_tasks(
        [fake_worker_task("exit")] * 4, worker_module="fake_plugins.fake_worker"
    )
    assert [o.status for o in outcomes] == ["crashed"] * 4


def test_check_on_a_kernel_that_kills_every_worker_costs_three_workers():
    cases = [Case(problem=Problem(m=m, n=6, k=7)) for m in (1, 2, 3, 4, 5)]
    with only_extra_plugins(["fake_plugins.device_faults"]):
        kernels = discover().select(["fake_kills_worker"])
        results = check_runner.run_check(kernels, cases, gpu=False)
    statuses = [r.status for r in results]
    lost = check_runner.LOST_WORKERS_IN_A_ROW
    assert statuses == ["crashed"] * lost + ["skip"] * (len(cases) + 1 - lost)
    assert "worker exited with code 9" in results[0].reason
    for skipped in results[lost:]:
        assert skipped.reason == (
            f"skipped: {lost} cases in a row crashed their worker or left it unusable "
            f"({results[lost - 1].id}: worker exited with code 9)"
        )
    assert results[-1].kind == "refusal"  # skipped like the others


# ---------------------------------------------------------------------------
# 3. compare: a cold start that hangs costs one timeout, and with fewer than
#    two kernels left nothing is timed
# ---------------------------------------------------------------------------


class _Answers:
    """A session that answers every task with ``status``, counting the tasks."""

    def __init__(self, status: str):
        self.status, self.tasks = status, 0

    def run(self, task, timeout):
        self.tasks += 1
        return isolation.TaskOutcome(status=self.status, error="no answer within 1 s")

    def close(self):
        pass


def test_a_task_that_hung_is_not_rerun_one_that_crashed_is():
    started = []

    def fresh():
        started.append(_Answers("ok"))
        return started[-1]

    hung = _Answers("timeout")
    task = fake_worker_task("ok")
    outcome, session, note = run_retrying(hung, task, 1, fresh)
    assert (outcome.status, session, note, hung.tasks, started) == ("timeout", hung, "", 1, [])
    outcome, session, note = run_retrying(_Answers("crashed"), task, 1, fresh)
    assert outcome.status == "ok" and session is started[0] and note.startswith("a first worker")


def test_a_worker_hung_in_its_start_up_is_a_timeout_and_is_not_started_again(fake_plugins):
    started = []

    def fresh():
        started.append(Session(None, worker_module="fake_plugins.silent_worker"))
        return started[-1]

    silent = Session(None, startup_timeout=1, worker_module="fake_plugins.silent_worker")
    try:
        task = ColdTask(kernel="fake_good", problem=TINY, seed=1)
        outcome, _, _ = run_retrying(silent, task, 5, fresh)
    finally:
        for session in [silent, *started]:
            session.close()
    assert outcome.status == "timeout"
    assert outcome.error.startswith("no answer within 1 s of start-up")
    assert started == []


def test_compare_stops_after_the_cold_starts_when_one_kernel_hung_there():
    env = plugin_env("good", "misbehaving", FAKE_KERNELS="fake_hang")
    args = ("compare", "fake_good", "fake_hang", "--shape", "8x8x8", "--processes", "1")
    done = run_gemmreg(*args, "--timeout", str(HANG_LIMIT_S), "--format", "json", env=env)
    assert done.returncode == 1, done.stderr[-2000:]  # a kernel failed: not bad input (2)
    report = json.loads(done.stdout)["report"]
    rows = {s["kernel"]: s for s in report["summaries"]}
    assert rows["fake_hang"]["status"] == "timeout"
    assert (
        rows["fake_hang"]["reason"]
        == f"cold start: no answer within {HANG_LIMIT_S} s; worker killed"
    )
    assert rows["fake_good"]["status"] == "skipped"
    assert rows["fake_good"]["reason"] == (
        "not timed: the timing needs 2 kernels and only 1 came through the cold starts "
        "(failed there: fake_hang: timeout)"
    )
    assert report["records"] == []  # no timing process ran
    assert [c["status"] for c in report["cold"]] == ["ok", "timeout"]  # one timeout, no rerun
    assert f"  cold start: fake_hang: timeout no answer within {HANG_LIMIT_S} s" in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "gemmreg: nothing was timed: fake_hang: timeout: cold start: "
            f"no answer within {HANG_LIMIT_S} s"
        )
    )
