"""Run plugin work in worker processes, so that no kernel can take a run down.

A kernel that reads out of bounds can kill its process outright (a segfault
under Triton's interpreter, a poisoned context on a GPU), and a kernel can
hang. Each batch of tasks runs in a fresh ``python -m gemmreg.worker``; the
worker reports each task's start and end on a private pipe. When the worker
dies or stops answering, the task in flight is marked *crashed* or *timeout*,
and a new worker carries on with the tasks that remain.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import attrs

STARTUP_TIMEOUT_S = 300.0
"""Time a worker may take to import torch and discover plugins before its first task."""
DEFAULT_TASK_TIMEOUT_S = 600.0
"""Time one task may take before its worker is killed and the task called hung."""
LOG_TAIL_CHARS = 1500
WORKER_MODULE = "gemmreg.worker"
"""How much of a dead worker's output is kept as evidence."""

Status = Literal["ok", "error", "crashed", "timeout"]


@attrs.frozen(kw_only=True)
class TaskOutcome:
    status: Status
    result: dict[str, Any] | None = None
    error: str = ""


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "worker did not exit"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"worker killed by {name}"
    return f"worker exited with code {returncode}"


def _tail(log: Any) -> str:
    log.seek(0)
    text = log.read().decode(errors="replace")
    return text[-LOG_TAIL_CHARS:].strip()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def run_tasks(
    tasks: Sequence[dict[str, Any]],
    *,
    task_timeout: float = DEFAULT_TASK_TIMEOUT_S,
    startup_timeout: float = STARTUP_TIMEOUT_S,
    on_outcome: Callable[[int, TaskOutcome], None] | None = None,
    env: dict[str, str] | None = None,
    worker_module: str = WORKER_MODULE,
    command_prefix: Callable[[], Sequence[str]] | None = None,
) -> list[TaskOutcome]:
    """Run ``tasks`` in order in worker processes; one outcome per task, always.

    :param on_outcome: Called as each task finishes (for progress and for
        keeping partial results when the run is interrupted).
    :param command_prefix: Called once per worker started, just before it is;
        what it returns goes in front of the worker's command line (a sanitizer
        and its options, with a log file of that worker's own). The event pipe
        is a plain inherited descriptor, so a prefix that fork/execs the worker
        keeps it.
    """
    outcomes: list[TaskOutcome | None] = [None] * len(tasks)

    def settle(index: int, outcome: TaskOutcome) -> None:
        outcomes[index] = outcome
        if on_outcome is not None:
            on_outcome(index, outcome)

    while True:
        remaining = [i for i, outcome in enumerate(outcomes) if outcome is None]
        if not remaining:
            break
        prefix = list(command_prefix()) if command_prefix is not None else []
        _run_one_worker(
            tasks, remaining, settle, task_timeout, startup_timeout, env, worker_module, prefix
        )
    return [outcome for outcome in outcomes if outcome is not None]


def _run_one_worker(
    tasks: Sequence[dict[str, Any]],
    remaining: list[int],
    settle: Callable[[int, TaskOutcome], None],
    task_timeout: float,
    startup_timeout: float,
    env: dict[str, str] | None,
    worker_module: str,
    prefix: Sequence[str] = (),
) -> None:
    """One worker's life. Settles at least one task, so the caller's loop ends."""
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", worker_module, str(write_fd)],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            pass_fds=(write_fd,),
            start_new_session=True,  # so a kill reaches the worker's own children too
            env=env,
        )
        os.close(write_fd)
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps({"tasks": [tasks[i] for i in remaining]}).encode())
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
            while True:
                wait = deadline - time.monotonic()
                if wait <= 0 or not selector.select(timeout=wait):
                    _kill(proc)
                    position = current if current is not None else len(settled)
                    limit = task_timeout if current is not None else startup_timeout
                    stage = "" if current is not None else " (before its first task)"
                    settle(
                        remaining[position],
                        TaskOutcome(
                            status="timeout",
                            error=f"no answer within {limit:g} s{stage}; worker killed",
                        ),
                    )
                    return
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    event = json.loads(line)
                    if event["event"] == "ready":
                        ready = True
                        deadline = time.monotonic() + task_timeout
                        continue
                    if event["event"] == "retire":
                        retired = True
                        continue
                    if event["event"] == "note":  # what a task is doing: sessions use it
                        continue
                    position = event["task"]
                    if event["event"] == "start":
                        current = position
                    else:
                        current = None
                        settled.add(position)
                        settle(
                            remaining[position],
                            TaskOutcome(
                                status=event["status"],
                                result=event.get("result"),
                                error=event.get("error", ""),
                            ),
                        )
                    deadline = time.monotonic() + task_timeout
        except BaseException:
            _kill(proc)
            raise
        finally:
            selector.close()
            os.close(read_fd)

        proc.wait()
        if len(settled) == len(remaining) or retired:
            return
        if not ready:
            # The worker never came up (broken install, bad environment): no
            # new worker would fare better, so every remaining task gets the reason.
            reason = f"{_describe_exit(proc.returncode)} during start-up\n{_tail(log)}".strip()
            for index in remaining:
                settle(index, TaskOutcome(status="crashed", error=reason))
            return
        position = current if current is not None else len(settled)
        reason = _describe_exit(proc.returncode)
        if current is None:
            reason += " before starting this task"
        tail = _tail(log)
        settle(
            remaining[position],
            TaskOutcome(status="crashed", error=f"{reason}\n{tail}" if tail else reason),
        )
