"""One worker process: how it is started, ended and described when it died.

Shared by the two ways work reaches a worker, a batch of tasks
(:mod:`gemmreg.workers.isolation`) and a long-lived session
(:mod:`gemmreg.workers.sessions`): the same start (its own process group, its
events on a private pipe, tied to gemmreg's lifeline), the same kill of the
whole group, the same words for how it ended and the same tail of its output.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import IO

from gemmreg.workers import lifeline

LOG_TAIL_CHARS = 1500
"""How much of a dead worker's output is kept as evidence."""
WORKER_MODULE = "gemmreg.commands.worker"
TASK_MARKER = "--- gemmreg worker: task {} starts ---"
"""Written to the worker's log as each task starts: a crash quotes only the
output of its own task, never what another plugin printed before it."""


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "worker did not exit"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"worker killed by {name}"
    return f"worker exited with code {returncode}"


def log_tail(log: IO[bytes]) -> str:
    """The end of the worker's output since the last task started."""
    log.seek(0)
    text = log.read().decode(errors="replace")
    marker = TASK_MARKER.split("{}")[0]
    start = text.rfind(marker)
    if start >= 0:
        text = text[text.find("\n", start) + 1 :] if "\n" in text[start:] else ""
    return text[-LOG_TAIL_CHARS:].strip()


def spawn_worker(
    prefix: Sequence[str],
    worker_module: str,
    write_fd: int,
    log: IO[bytes],
    env: dict[str, str] | None,
) -> subprocess.Popen[bytes]:
    """Start ``python -m worker_module FD`` with its events on ``write_fd``
    (closed here once handed on), its output in ``log``, in a session of its
    own (so a kill reaches its children too), tied to this process's lifeline."""
    lifeline_fd = lifeline.read_end()
    worker_env = {**(os.environ if env is None else env), lifeline.LIFELINE_ENV: str(lifeline_fd)}
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-m", worker_module, str(write_fd)],
        stdin=subprocess.PIPE,
        stdout=log,
        stderr=subprocess.STDOUT,
        pass_fds=(write_fd, lifeline_fd),
        start_new_session=True,
        env=worker_env,
    )
    os.close(write_fd)
    return proc


def kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def end(proc: subprocess.Popen[bytes], grace: float) -> None:
    """Let the worker exit (a sanitizer prefix writes its report as it does),
    then kill its process group: whatever a kernel forked and left running
    dies with it, and holds no pipe or device open."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    kill(proc)
