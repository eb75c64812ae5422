"""``python -m gemmreg.commands.worker FD``: runs tasks for :mod:`gemmreg.workers.isolation`.

A task is a :mod:`gemmreg.workers.tasks` record and its result a
:mod:`gemmreg.workers.task_results` record, both as JSON (:mod:`gemmreg.workers.task_wire`).
Reads a job line on stdin: ``{"tasks": [...]}`` runs those tasks in order;
``{"session": true}`` starts up and then runs each further line of stdin as
one task, until stdin closes (a worker kept across sweep points, or started
ahead of its turn so that its start-up is off the critical path). Writes one
JSON line per event on file descriptor FD (never stdout, which kernels and
libraries are free to print on): ``ready`` after start-up, then ``start``,
``note`` (what it is doing, so a crash can be attributed) and ``done`` for
each task, and ``retire`` when the worker stops early because its GPU context
is unusable.

Every task starts from the same pinned torch state (:mod:`gemmreg.discovery.torch_state`),
so what one plugin changed never reaches the next; whatever a task's plugin
code raises, ``SystemExit`` included, is that task's error. The worker dies
with gemmreg (:mod:`gemmreg.workers.lifeline`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gemmreg.contract.task_kinds import COLD, PROFILE, ROUNDS, TaskKind
from gemmreg.workers.task_results import TaskResult
from gemmreg.workers.task_wire import KIND_KEY
from gemmreg.workers.tasks import CHECK_TASK_CLASSES, ColdTask, ProfileTask, RoundsTask, Task

if TYPE_CHECKING:
    from gemmreg.discovery.registry_records import Registry

TRACEBACK_CHARS = 2000

Note = Callable[[str], None]
"""Told what a task is about to do (a ``note`` event), so a crash is blamed right."""


def _run_task(registry: Registry, task: Task, note: Note) -> TaskResult:
    """Run one task: a check case as its check kind says
    (:mod:`gemmreg.checking.check_kinds`), any other by its task kind's function."""
    if isinstance(task, CHECK_TASK_CLASSES):
        from gemmreg.checking import check_kinds

        return check_kinds.run_case(registry, task)
    return _RUNNERS[task.kind](registry, task, note)


def _cold(registry: Registry, task: ColdTask, note: Note) -> TaskResult:
    from gemmreg.timing.timing import cold_start

    return cold_start(registry.get(task.kernel).spec, task.problem, task.seed)


def _rounds(registry: Registry, task: RoundsTask, note: Note) -> TaskResult:
    """Every kernel of a comparison at once."""
    from gemmreg.timing import timing

    specs = {name: registry.get(name).spec for name in task.kernels}
    policy = timing.policy_for(task.gpu, task.repeats, task.warmup, task.max_time_s)
    return timing.measure_group(
        specs, task.problem, task.seed, task.order_seed, policy, task.l2, note
    )


def _profile(registry: Registry, task: ProfileTask, note: Note) -> TaskResult:
    from gemmreg.timing import profiling

    specs = {name: registry.get(name).spec for name in task.kernels}
    if task.capture:
        return profiling.capture_calls(specs, task.problem, task.seed, note)
    return profiling.device_profiles(specs, task.problem, task.seed, note)


# The runners of the tasks that are no check case. Each takes its own kind's
# record: that the kind picks the record is the task wire's invariant
# (TASK_TYPES), which no static type here can say.
_RUNNERS: dict[TaskKind, Callable[[Registry, Any, Note], TaskResult]] = {
    COLD: _cold,
    ROUNDS: _rounds,
    PROFILE: _profile,
}


def _mark_log(position: int) -> None:
    """Separate this task's output from the previous one's in the worker's log."""
    from gemmreg.workers.worker_processes import TASK_MARKER

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a plugin may have replaced or closed it
            stream.flush()
    with contextlib.suppress(OSError):
        os.write(1, ("\n" + TASK_MARKER.format(position) + "\n").encode())


def _may_time(tasks: list[dict[str, object]] | None) -> bool:
    """Whether this worker may be handed a rounds task: a session may (the
    pools that time are sessions), a batch only if it holds one. A check's
    batches of values and refusals pay nothing for the clock they never build."""
    return tasks is None or any(task.get(KIND_KEY) == ROUNDS for task in tasks)


def _release_events(fd: int) -> None:
    """In a process a kernel forks: the event pipe's end becomes /dev/null.
    A child that outlives its task would otherwise hold the pipe open, and
    the runner would wait for an end of file that never comes; nor may it
    write events in the worker's name."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def main(argv: list[str]) -> int:
    from gemmreg.contract import backend
    from gemmreg.workers import lifeline

    backend.settle_interpreter_early()  # a worker runs kernels: before any plugin's import

    lifeline.hold_on()
    events = os.fdopen(int(argv[1]), "w", buffering=1)
    os.register_at_fork(after_in_child=lambda: _release_events(events.fileno()))

    def emit(**event: object) -> None:
        events.write(json.dumps(event) + "\n")
        events.flush()

    job = json.loads(sys.stdin.readline() or "{}")
    from gemmreg.discovery import judge_state, torch_state
    from gemmreg.discovery import registry as registry_module
    from gemmreg.discovery.plugin_errors import describe
    from gemmreg.workers.task_wire import encode, read_task

    judge_state.baseline()  # what judges kernels, read before any plugin's import
    registry = registry_module.discover(watchdog=False)  # STARTUP_TIMEOUT_S guards it
    torch_state.pin()
    backend.initialize_device()
    tasks = job.get("tasks")
    if backend.current().is_gpu and _may_time(tasks):
        from gemmreg.instruments import stream_hold

        stream_hold.compile_ahead()  # what a timing task compiles first, while no one times
    emit(event="ready")
    lines = iter(tasks) if tasks is not None else (json.loads(line) for line in sys.stdin)

    def note(text: str) -> None:
        emit(event="note", text=text)

    for position, task in enumerate(lines):
        _mark_log(position)
        emit(event="start", task=position)
        try:
            torch_state.pin()  # whatever the task before changed
            result = _run_task(registry, read_task(task), note)
        except BaseException as error:  # the kernel's failure (even sys.exit) is the task's result
            text = "".join(traceback.format_exception(error))[-TRACEBACK_CHARS:]
            emit(
                event="done",
                task=position,
                status="error",
                error=f"{type(error).__name__}: {error}".strip()
                if isinstance(error, Exception)
                else describe(error),
                traceback=text,
            )
            if not backend.device_healthy():
                # A poisoned context would fail every later task here: retire,
                # and let the runner start a fresh worker for the rest.
                emit(event="retire", reason="GPU context unusable after the error")
                return 0
        else:
            emit(event="done", task=position, status="ok", result=encode(result))
            backend.release_memory()  # an idle session worker keeps no operands reserved
        if judge_state.changes():
            # What judge_state cannot put back (a kernel registered in torch's
            # dispatcher) was blamed on the task that left it; any later task
            # here would fail for it too, blamed on an innocent plugin.
            emit(event="retire", reason=RETIRED_JUDGE_CHANGED)
            return 0
    return 0


RETIRED_JUDGE_CHANGED = "a plugin left what judges kernels changed where it cannot be put back"
"""Why a worker retires after a task that left torch's dispatcher changed."""


def _exit_now(code: int) -> None:
    """Leave without the interpreter's teardown (:mod:`gemmreg.workers.quick_exit`):
    the runner waits for its workers to be gone before timing the next
    thing, so their teardown was on the critical path of every comparison.
    Under compute-sanitizer or a profiler the worker exits normally: some
    sanitizer tools report when the GPU context is torn down, and a profiler
    waits for its target to end."""
    from gemmreg.checking.sanitizer_tools import SANITIZING_ENV
    from gemmreg.timing.profiler_tools import PROFILING_ENV
    from gemmreg.workers.quick_exit import leave

    if os.environ.get(SANITIZING_ENV) or os.environ.get(PROFILING_ENV):
        raise SystemExit(code)
    leave(code)


if __name__ == "__main__":
    _exit_now(main(sys.argv))
