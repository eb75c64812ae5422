"""``python -m gemmreg.worker FD``: runs tasks for :mod:`gemmreg.isolation`.

Reads ``{"tasks": [...]}`` on stdin; writes one JSON line per event on file
descriptor FD (never stdout, which kernels and libraries are free to print on):
``ready`` after start-up, then ``start`` and ``done`` for each task in order,
and ``retire`` when the worker stops early because its GPU context is unusable.

Every task starts from the same pinned torch state (:mod:`gemmreg.torch_state`),
so what one plugin changed never reaches the next; whatever a task's plugin
code raises, ``SystemExit`` included, is that task's error. The worker dies
with gemmreg (:mod:`gemmreg.lifeline`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from typing import Any

TRACEBACK_CHARS = 2000


def _run_task(registry: Any, task: dict[str, Any]) -> dict[str, Any]:
    from gemmreg.records import Problem
    from gemmreg.timing import measure
    from gemmreg.verification import check_case, refusal_case

    spec = registry.get(task["kernel"]).spec
    problem = Problem(**task["problem"])
    if task["kind"] == "check":
        before = None
        if task.get("poison_shared"):
            from gemmreg.smem_poison import poison_shared_memory

            before = poison_shared_memory
        return check_case(spec, problem, task["seed"], task.get("values", "plugin"), before)
    if task["kind"] == "refuse":
        return refusal_case(spec, problem)
    if task["kind"] == "time":
        return measure(
            spec,
            problem,
            task["seed"],
            repeats=task.get("repeats"),
            warmup=task.get("warmup"),
            flush=task.get("flush", True),
            max_time_s=task.get("max_time_s"),
        )
    raise ValueError(f"unknown task kind {task['kind']!r}")


def _mark_log(position: int) -> None:
    """Separate this task's output from the previous one's in the worker's log."""
    from gemmreg.isolation import TASK_MARKER

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a plugin may have replaced or closed it
            stream.flush()
    with contextlib.suppress(OSError):
        os.write(1, ("\n" + TASK_MARKER.format(position) + "\n").encode())


def main(argv: list[str]) -> int:
    from gemmreg import lifeline

    lifeline.hold_on()
    events = os.fdopen(int(argv[1]), "w", buffering=1)

    def emit(**event: Any) -> None:
        events.write(json.dumps(event) + "\n")
        events.flush()

    job = json.load(sys.stdin)
    from gemmreg import backend, torch_state
    from gemmreg import registry as registry_module
    from gemmreg.loading import describe

    registry = registry_module.discover()
    torch_state.pin()
    backend.initialize_device()
    emit(event="ready")
    for position, task in enumerate(job["tasks"]):
        _mark_log(position)
        emit(event="start", task=position)
        try:
            torch_state.pin()  # whatever the task before changed
            result = _run_task(registry, task)
        except BaseException as error:  # the kernel's failure (even sys.exit) is the task's result
            text = "".join(traceback.format_exception(error))[-TRACEBACK_CHARS:]
            emit(
                event="done",
                task=position,
                status="error",
                error=f"{type(error).__name__}: {error}".strip()
                if isinstance(error, Exception)
                else describe(error),
                result={"traceback": text},
            )
            if not backend.device_healthy():
                # A poisoned context would fail every later task here: retire,
                # and let the runner start a fresh worker for the rest.
                emit(event="retire", reason="GPU context unusable after the error")
                return 0
            continue
        emit(event="done", task=position, status="ok", result=result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
