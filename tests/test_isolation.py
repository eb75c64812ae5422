"""The worker-process runner: one outcome per task, whatever the worker does."""

from __future__ import annotations

import os
import time

from conftest import HANG_LIMIT_S, fake_worker_task
from gemmreg.workers import isolation


def test_a_retiring_worker_is_replaced_and_no_task_is_lost(fake_plugins):
    tasks = [fake_worker_task(action) for action in ("ok", "retire", "ok", "ok")]
    outcomes = isolation.run_tasks(tasks, worker_module="fake_plugins.fake_worker")
    assert [o.status for o in outcomes] == ["ok", "error", "ok", "ok"]
    assert outcomes[1].error == "illegal address"
    first, _, third, fourth = (o.result.reason if o.result else None for o in outcomes)
    assert first != third  # the tasks after the retirement ran in a fresh process
    assert third == fourth


def test_a_worker_that_cannot_start_fails_every_task_with_the_reason(fake_plugins):
    tasks = [fake_worker_task("ok")] * 2
    outcomes = isolation.run_tasks(tasks, worker_module="fake_plugins.no_such_worker")
    assert [o.status for o in outcomes] == ["crashed", "crashed"]
    assert "during start-up" in outcomes[0].error
    assert "No module named fake_plugins.no_such_worker" in outcomes[0].error


def _gone(pid: int, within_s: float = 5.0) -> bool:
    """Whether ``pid`` is dead (gone, or a zombie not yet reaped by init)."""
    stop = time.monotonic() + within_s
    while time.monotonic() < stop:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_a_forked_child_holding_the_event_pipe_costs_no_wait_and_is_killed(fake_plugins):
    """The child keeps the pipe open for 60 s: the runner must not wait for
    its end of file (that waited out the task limit, then raised IndexError)."""
    tasks = [fake_worker_task(action) for action in ("ok", "fork")]
    start = time.monotonic()
    outcomes = isolation.run_tasks(
        tasks, task_timeout=HANG_LIMIT_S, worker_module="fake_plugins.fake_worker"
    )
    assert time.monotonic() - start < HANG_LIMIT_S
    assert [o.status for o in outcomes] == ["ok", "ok"]
    child = int(outcomes[1].result.reason)
    assert child != os.getpid() and _gone(child)


def test_a_worker_that_dies_while_its_forked_child_lives_is_a_crash_not_a_timeout(fake_plugins):
    tasks = [fake_worker_task(action) for action in ("fork", "exit", "ok")]
    start = time.monotonic()
    outcomes = isolation.run_tasks(
        tasks, task_timeout=HANG_LIMIT_S, worker_module="fake_plugins.fake_worker"
    )
    assert time.monotonic() - start < HANG_LIMIT_S
    assert [o.status for o in outcomes] == ["ok", "crashed", "ok"]
    assert "worker exited with code 3" in outcomes[1].error
    assert _gone(int(outcomes[0].result.reason))
