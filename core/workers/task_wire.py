"""Tasks and results across the worker boundary: JSON lines, typed records.

Both sides use the one pair :func:`encode` / :func:`decode`: the runner
encodes a task and the worker decodes it (:func:`read_task`); the worker
encodes its result and the runner reads the ``done`` event into a typed
:class:`~gemmreg.workers.tasks.TaskOutcome` (:func:`read_outcome`), the one place
where that happens, for the batch runner and the sessions alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from gemmreg.contract.serialization import from_jsonable, to_jsonable
from gemmreg.workers.task_results import TaskResult
from gemmreg.workers.tasks import RESULT_TYPES, TASK_CLASSES, TASK_TYPES, Task, TaskOutcome

KIND_KEY = "kind"
R = TypeVar("R")


def encode(record: Task | TaskResult) -> dict[str, Any]:
    """A task or a result as a JSON-able dict; a task says which kind it is."""
    data: dict[str, Any] = to_jsonable(record)
    if isinstance(record, TASK_CLASSES):
        return {KIND_KEY: record.kind, **data}
    return data


def decode(cls: type[R], data: Mapping[str, Any]) -> R:
    """The record ``cls`` from what :func:`encode` made of it."""
    return from_jsonable(cls, {k: v for k, v in data.items() if k != KIND_KEY})


def read_task(data: Mapping[str, Any]) -> Task:
    """The task a worker was sent (ValueError for a kind it does not know)."""
    kind = data.get(KIND_KEY)
    cls = TASK_TYPES.get(kind) if kind in TASK_TYPES else None
    if cls is None:
        raise ValueError(f"unknown task kind {kind!r}")
    return decode(cls, data)


def read_outcome(task: Task, event: Mapping[str, Any]) -> TaskOutcome:
    """A worker's ``done`` event for ``task``, as its typed outcome. A result
    that does not fit the task's record (a worker from another version) is
    the task's error, said so, rather than a crash of the runner."""
    status = event["status"]
    error = event.get("error", "")
    traceback = event.get("traceback", "")
    if status != "ok":
        return TaskOutcome(status=status, error=error, traceback=traceback)
    try:
        result = decode(RESULT_TYPES[task.kind], event["result"])
    except (KeyError, TypeError, ValueError) as problem:
        why = f"{type(problem).__name__}: {problem}"
        return TaskOutcome(
            status="error", error=f"unreadable {task.kind} result from the worker: {why}"
        )
    return TaskOutcome(status="ok", result=result)
