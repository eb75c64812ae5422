"""Workers started before the command has read its plugins
(gemmreg.timing.worker_pool.Ahead): what a command that then fails leaves behind.
The success path runs in test_end_to_end.py's compare."""

from __future__ import annotations

import os
import re

from conftest import run_gemmreg
from gemmreg.timing import worker_pool


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"gemmreg.commands.worker" in f.read()
    except OSError:
        return False


def test_a_command_that_fails_after_starting_ahead_kills_its_workers():
    """An unknown name is found only once the plugins are read, after the
    workers started: one line, exit 2, and none of them left running."""
    ahead = {worker_pool.START_AHEAD_ENV: "1", "GEMMREG_TRACE": "1"}
    done = run_gemmreg("compare", "torch_ref", "nope", "--shape", "8x8x8", env=ahead)
    assert done.returncode == 2, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if not line.startswith("[trace")]
    assert errors == [errors[0]] and "unknown plugin 'nope'" in errors[0]
    pids = [int(p) for p in re.findall(r"worker (\d+): started", done.stderr)]
    assert len(pids) == 2 + 3  # a cold-start worker per name, three timing workers
    assert not [pid for pid in pids if _alive(pid)]


def test_the_choice_follows_the_switch_then_the_device_nodes(monkeypatch):
    from gemmreg.contract import backend

    monkeypatch.setenv(worker_pool.START_AHEAD_ENV, "1")
    assert worker_pool.starting_ahead()
    monkeypatch.setenv(worker_pool.START_AHEAD_ENV, "0")
    assert not worker_pool.starting_ahead()
    monkeypatch.delenv(worker_pool.START_AHEAD_ENV)
    monkeypatch.delenv(backend.FORCE_ENV, raising=False)
    monkeypatch.setattr(backend, "GPU_DEVICE_NODES", (os.devnull,))
    assert worker_pool.starting_ahead()
    monkeypatch.setenv(backend.FORCE_ENV, "cpu")  # a forced CPU run never guesses a GPU
    assert not worker_pool.starting_ahead()
    monkeypatch.delenv(backend.FORCE_ENV)
    monkeypatch.setattr(backend, "GPU_DEVICE_NODES", ("/nonexistent/nvidiactl",))
    assert not worker_pool.starting_ahead()
