"""The worker-process runner: one outcome per task, whatever the worker does."""

from __future__ import annotations

from conftest import fake_worker_task
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
