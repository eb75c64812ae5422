"""Run plugin work in worker processes, so that no kernel can take a run down.

A kernel that reads out of bounds can kill its process outright (a segfault
under Triton's interpreter, a poisoned context on a GPU), and a kernel can
hang. Each batch of tasks runs in a fresh ``python -m gemmreg.commands.worker``; the
worker reports each task's start and end on a private pipe. When the worker
dies or stops answering, the task in flight is marked *crashed* or *timeout*,
and a new worker carries on with the tasks that remain. When asked, the rest
of the batch is skipped after a timeout (a plugin that hangs once usually
hangs on every case), or after several tasks in a row each lost their worker
(a crash, or a GPU context left unusable: a fresh worker costs seconds each
time). Workers die with gemmreg (:mod:`gemmreg.workers.lifeline`).
"""

from __future__ import annotations

import json
import os
import selectors
import tempfile
import time
from collections.abc import Callable, Sequence

from gemmreg.workers.task_wire import encode, read_outcome
from gemmreg.workers.tasks import Status as Status
from gemmreg.workers.tasks import Task
from gemmreg.workers.tasks import TaskOutcome as TaskOutcome  # re-exported: its home was here
from gemmreg.workers.worker_processes import (
    WORKER_MODULE,
    describe_exit,
    end,
    kill,
    log_tail,
    spawn_worker,
)

STARTUP_TIMEOUT_S = 300.0
"""Time a worker may take to import torch and discover plugins before its first task."""
DEFAULT_TASK_TIMEOUT_S = 600.0
"""Time one task may take before its worker is killed and the task called hung."""
AFTER_TIMEOUT = "an earlier case timed out"
EXIT_POLL_S = 0.5
"""How often a worker that sends nothing is asked whether it still runs. A
process a kernel forked inherits the event pipe and can hold it open after
the worker is gone, so an end of file may never come: the worker's own exit
is what ends the wait, and its process group (the forked children with it)
is killed then."""


def run_tasks(
    tasks: Sequence[Task],
    *,
    task_timeout: float | Sequence[float] = DEFAULT_TASK_TIMEOUT_S,
    startup_timeout: float = STARTUP_TIMEOUT_S,
    on_outcome: Callable[[int, TaskOutcome], None] | None = None,
    env: dict[str, str] | None = None,
    worker_module: str = WORKER_MODULE,
    command_prefix: Callable[[], Sequence[str]] | None = None,
    skip_after_timeout: bool = False,
    skip_after_lost_workers: int = 0,
) -> list[TaskOutcome]:
    """Run ``tasks`` in order in worker processes; one outcome per task, always.

    :param task_timeout: Seconds one task may take: one limit for all, or one per task.
    :param skip_after_timeout: After a task times out, settle every task not
        yet run as ``skipped`` (its ``cause`` names the task that hung)
        instead of starting a new worker for them.
    :param skip_after_lost_workers: When this many tasks in a row (0: never)
        each ended their worker (it crashed, or retired with its GPU context
        unusable), settle the rest as ``skipped``, ``cause`` the last of them.
    :param on_outcome: Called as each task finishes (for progress and for
        keeping partial results when the run is interrupted).
    :param command_prefix: Called once per worker started, just before it is;
        what it returns goes in front of the worker's command line (a sanitizer
        and its options, with a log file of that worker's own). The event pipe
        is a plain inherited descriptor, so a prefix that fork/execs the worker
        keeps it.
    """
    outcomes: list[TaskOutcome | None] = [None] * len(tasks)
    if isinstance(task_timeout, int | float):
        limits = [float(task_timeout)] * len(tasks)
    else:
        limits = [float(limit) for limit in task_timeout]
        if len(limits) != len(tasks):
            raise ValueError(f"{len(limits)} task timeouts for {len(tasks)} tasks")

    def settle(index: int, outcome: TaskOutcome) -> None:
        outcomes[index] = outcome
        if on_outcome is not None:
            on_outcome(index, outcome)

    lost, lost_in_a_row = -1, 0  # the last task that lost its worker; how many in a row
    while True:
        remaining = [i for i, outcome in enumerate(outcomes) if outcome is None]
        if not remaining:
            break
        hung = [i for i, o in enumerate(outcomes) if o is not None and o.status == "timeout"]
        stop: tuple[int, str] | None = None
        if skip_after_timeout and hung:
            stop = hung[0], AFTER_TIMEOUT
        elif skip_after_lost_workers and lost_in_a_row >= skip_after_lost_workers:
            stop = lost, f"{lost_in_a_row} cases in a row crashed their worker or left it unusable"
        if stop is not None:
            cause = outcomes[stop[0]]
            assert cause is not None
            first = cause.error.strip().splitlines()[0] if cause.error.strip() else cause.status
            for index in remaining:
                skipped = TaskOutcome(
                    status="skipped", error=first, cause=stop[0], skip_rule=stop[1]
                )
                settle(index, skipped)
            break
        prefix = list(command_prefix()) if command_prefix is not None else []
        ended_on = _run_one_worker(
            tasks, remaining, settle, limits, startup_timeout, env, worker_module, prefix
        )
        # In a row: each worker died on the first task it was given.
        lost_in_a_row = 0 if ended_on is None else 1 + lost_in_a_row * (ended_on == remaining[0])
        lost = lost if ended_on is None else ended_on
    return [outcome for outcome in outcomes if outcome is not None]


def _run_one_worker(
    tasks: Sequence[Task],
    remaining: list[int],
    settle: Callable[[int, TaskOutcome], None],
    limits: Sequence[float],
    startup_timeout: float,
    env: dict[str, str] | None,
    worker_module: str,
    prefix: Sequence[str] = (),
) -> int | None:
    """One worker's life. Settles at least one task, so the caller's loop ends.
    Returns the task the worker was lost on (it crashed, or retired after
    it), or None."""
    read_fd, write_fd = os.pipe()

    def limit_at(position: int) -> float:
        """The limit of the task at ``position`` in ``remaining`` (or the last one's)."""
        return limits[remaining[min(position, len(remaining) - 1)]]

    with tempfile.TemporaryFile() as log:
        proc = spawn_worker(prefix, worker_module, write_fd, log, env)
        assert proc.stdin is not None
        try:
            batch = [encode(tasks[i]) for i in remaining]
            proc.stdin.write(json.dumps({"tasks": batch}).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass

        selector = selectors.DefaultSelector()
        selector.register(read_fd, selectors.EVENT_READ)
        buffer = b""
        current: int | None = None  # position in `remaining` of the task in flight
        settled: set[int] = set()
        ready = False
        retired = False  # the worker asked to be replaced (its GPU context is unusable)
        deadline = time.monotonic() + startup_timeout
        try:
            while len(settled) < len(remaining):
                wait = deadline - time.monotonic()
                if wait > 0 and not selector.select(timeout=min(wait, EXIT_POLL_S)):
                    if proc.poll() is None or selector.select(timeout=0):
                        continue  # still running, or its last words arrived just now
                    break  # gone, while something it forked may hold the pipe open
                if wait <= 0:
                    kill(proc)
                    position = current if current is not None else len(settled)
                    if not ready:
                        limit, stage = startup_timeout, " (before its first task)"
                    else:
                        limit = limit_at(position)
                        stage = "" if current is not None else " (between tasks)"
                    settle(
                        remaining[position],
                        TaskOutcome(
                            status="timeout",
                            error=f"no answer within {limit:g} s{stage}; worker killed",
                        ),
                    )
                    return None
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    event = json.loads(line)
                    if event["event"] == "ready":
                        ready = True
                        deadline = time.monotonic() + limit_at(0)
                        continue
                    if event["event"] == "retire":
                        retired = True
                        continue
                    if event["event"] == "note":  # what a task is doing: sessions use it
                        continue
                    position = event["task"]
                    if event["event"] == "start":
                        current = position
                        deadline = time.monotonic() + limit_at(position)
                        continue
                    current = None
                    settled.add(position)
                    index = remaining[position]
                    settle(index, read_outcome(tasks[index], event))
                    deadline = time.monotonic() + limit_at(position + 1)
        except BaseException:
            kill(proc)
            raise
        finally:
            selector.close()
            os.close(read_fd)

        end(proc, limit_at(len(remaining) - 1))
        if retired:
            return remaining[max(settled)] if settled else None
        if len(settled) == len(remaining):
            return None
        if not ready:
            # The worker never came up (broken install, bad environment): no
            # new worker would fare better, so every remaining task gets the reason.
            reason = f"{describe_exit(proc.returncode)} during start-up\n{log_tail(log)}".strip()
            for index in remaining:
                settle(index, TaskOutcome(status="crashed", error=reason))
            return None
        position = current if current is not None else len(settled)
        reason = describe_exit(proc.returncode)
        if current is None:
            reason += " before starting this task"
        tail = log_tail(log)
        settle(
            remaining[position],
            TaskOutcome(status="crashed", error=f"{reason}\n{tail}" if tail else reason),
        )
        return remaining[position]
