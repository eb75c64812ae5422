"""Worker sessions: a worker started ahead of its turn and fed one task at a time.

Starting a worker costs seconds (importing torch, discovering plugins,
creating the GPU context, setting up CUPTI). A comparison needs a fresh
process per kernel for its cold start and several independent processes
for its rounds; started one after another, their start-up would dominate
the wall time. So every worker of a comparison is started at once, does
its start-up in parallel with the others, and then waits, idle, for its
task: only one runs a task at a time, so timing never shares the GPU. A
sweep keeps its sessions across points. A task whose worker crashed gets
one rerun in a fresh worker (:func:`run_retrying`); one that hung does not.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Required, TypedDict

from gemmreg.workers.isolation import STARTUP_TIMEOUT_S, TaskOutcome
from gemmreg.workers.task_wire import encode, read_outcome
from gemmreg.workers.tasks import Task
from gemmreg.workers.tracing import trace
from gemmreg.workers.worker_processes import (
    WORKER_MODULE,
    describe_exit,
    kill,
    log_tail,
    spawn_worker,
)


class WorkerEvent(TypedDict, total=False):
    """One line a worker writes on its event pipe (:mod:`gemmreg.commands.worker`)."""

    event: Required[str]
    """``ready``, ``start``, ``note``, ``done`` or ``retire``."""
    task: int
    text: str
    """A ``note``: what the task is doing now."""
    reason: str
    """A ``retire``: why the worker stops."""
    status: str
    error: str
    traceback: str
    result: dict[str, object]
    """A ``done`` task's result (:mod:`gemmreg.workers.task_wire`)."""


class Session:
    """One worker process, started now, running tasks when asked."""

    def __init__(
        self,
        env: dict[str, str] | None,
        *,
        options: dict[str, object] | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
        worker_module: str = WORKER_MODULE,
    ):
        self.read_fd, write_fd = os.pipe()
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = spawn_worker((), worker_module, write_fd, self.log, env)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.read_fd, selectors.EVENT_READ)
        self.buffer = b""
        self.startup_deadline = time.monotonic() + startup_timeout
        self.startup_timeout = startup_timeout
        self.ready = False
        self.dead = ""
        """Why this session can run no more tasks, or ''."""
        self.hung = False
        """The worker stopped answering (at start-up or in a task) and was killed."""
        self.closed = False
        self.last_note = ""
        """What the task in flight said it was doing last (its 'note' events)."""
        self._send({"session": True, **(options or {})})
        trace(f"worker {self.proc.pid}: started")

    def _send(self, message: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # the worker is gone: reading its events says why

    def _next_event(self, deadline: float) -> WorkerEvent | None:
        """The next event, None at end of stream; raises TimeoutError at the deadline."""
        while b"\n" not in self.buffer:
            wait = deadline - time.monotonic()
            if wait <= 0 or not self.selector.select(timeout=wait):
                raise TimeoutError
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def _die(self, reason: str) -> str:
        kill(self.proc)
        tail = log_tail(self.log)
        self.dead = f"{reason}\n{tail}".strip() if tail else reason
        return self.dead

    def wait_ready(self) -> str:
        """'' once the worker is up, else why it never came up."""
        while not self.ready and not self.dead:
            try:
                event = self._next_event(self.startup_deadline)
            except TimeoutError:
                self.hung = True
                return self._die(f"no answer within {self.startup_timeout:g} s of start-up")
            if event is None:
                self.proc.wait()
                return self._die(f"{describe_exit(self.proc.returncode)} during start-up")
            self.ready = event["event"] == "ready"
            if self.ready:
                trace(f"worker {self.proc.pid}: ready")
        return self.dead

    def run(self, task: Task, timeout: float) -> TaskOutcome:
        """Run one task; a crash or a hang ends the session and is the outcome
        (a hang at start-up too: it is a ``timeout``, which nobody reruns)."""
        reason = self.wait_ready()
        if reason:
            return TaskOutcome(status="timeout" if self.hung else "crashed", error=reason)
        self._send(encode(task))
        trace(f"worker {self.proc.pid}: task {task.kind} sent")
        self.last_note = doing = ""
        deadline = time.monotonic() + timeout
        while True:
            try:
                event = self._next_event(deadline)
            except TimeoutError:
                self.hung = True
                while_ = f" while {doing}" if doing else ""
                self._die(f"no answer within {timeout:g} s{while_}; worker killed")
                return TaskOutcome(status="timeout", error=self.dead)
            if event is None:
                self.proc.wait()
                while_ = f" while {doing}" if doing else ""
                self._die(f"{describe_exit(self.proc.returncode)}{while_}")
                return TaskOutcome(status="crashed", error=self.dead)
            kind = event["event"]
            if kind == "note":
                self.last_note = doing = event["text"]
                trace(f"worker {self.proc.pid}: {doing}")
            elif kind == "retire":
                self.dead = event.get("reason", "retired")
            elif kind == "done":
                trace(f"worker {self.proc.pid}: task done, {event['status']}")
                return read_outcome(task, event)

    def begin_close(self) -> None:
        """Tell the worker to finish (stdin closed) without waiting for it, so
        that several workers tear down their GPU contexts at once."""
        if self.closed or self.proc.poll() is not None or self.proc.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, OSError):
            self.proc.stdin.close()

    def kill(self) -> None:
        """End the worker now, whatever it is doing (a command that failed
        before its workers were needed), and close the session."""
        if not self.closed and self.proc.poll() is None:
            kill(self.proc)
        self.close()

    def close(self) -> None:
        """Let the worker finish (stdin closed), or kill it if it lingers. Idempotent."""
        if self.closed:
            return
        self.closed = True
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                if not self.proc.stdin.closed:
                    self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
                kill(self.proc)
        trace(f"worker {self.proc.pid}: closed")
        self.selector.close()
        os.close(self.read_fd)
        self.log.close()


def run_retrying(
    session: Session, task: Task, timeout: float, fresh: Callable[[], Session]
) -> tuple[TaskOutcome, Session, str]:
    """Run ``task``; a worker that crashed (not one that hung) is replaced by a
    fresh one and the task run once more. Returns the outcome, the session
    that ran it last, and a note of the first crash ('' when there was none),
    so a rerun is never silent."""
    outcome = session.run(task, timeout)
    if outcome.status != "crashed":
        return outcome, session, ""
    first = outcome.error.splitlines()[0] if outcome.error else "crashed"
    session.close()
    session = fresh()
    retry = session.run(task, timeout)
    if retry.status == "crashed":
        return retry, session, ""
    return retry, session, f"a first worker crashed ({first}); this is a fresh worker's rerun"
