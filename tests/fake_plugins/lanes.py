"""Two correct kernels that log, from inside the worker, when each process
timed them and on which pretend GPU: one line a call (kernel, pid, pinned
index, ``cold`` or ``warm``, a monotonic clock shared by every process of
the host), in the file named by LANES_LOG_ENV (tests of ``compare
--devices``: processes on two GPUs overlap, on one GPU never).

A warm process (one of the timed processes, not a cold start: its caches are
not a cold start's own) waits at its first call, up to RENDEZVOUS_S, until a
timed process pinned to another GPU has started: when processes on two GPUs
do run side by side, they then overlap whatever the machine's load; when they
run one at a time, none meets a partner and nothing overlaps."""

import os
import time
from pathlib import Path

import gemmreg
import torch

from fake_plugins import fp32_spec

LANES_LOG_ENV = "GEMMREG_TEST_LANES_LOG"
RENDEZVOUS_S = 20.0
"""How long a timed process waits for a partner on another GPU: longer than
the start of one on a busy machine, far shorter than a task's time limit."""

_met = False


def _rendezvous(log: Path, pinned: str) -> None:
    global _met
    if _met:
        return
    _met = True
    folder = log.with_suffix(".started")
    folder.mkdir(exist_ok=True)
    (folder / f"{pinned}-{os.getpid()}").touch()
    deadline = time.monotonic() + RENDEZVOUS_S
    while time.monotonic() < deadline:
        if any(not p.name.startswith(f"{pinned}-") for p in folder.iterdir()):
            return
        time.sleep(0.05)


def _logged(name):
    def launch(a, b, out):
        torch.mm(a, b, out=out)
        path = os.environ.get(LANES_LOG_ENV)
        if not path:
            return
        pinned = os.environ.get("GEMMREG_PINNED_DEVICE", "-")
        cold = "/cold-" in os.environ.get("TRITON_CACHE_DIR", "")
        if not cold:
            _rendezvous(Path(path), pinned)
        with open(path, "a") as log:
            when = time.monotonic_ns()
            log.write(f"{name} {os.getpid()} {pinned} {'cold' if cold else 'warm'} {when}\n")

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    for name in ("fake_lanes_a", "fake_lanes_b"):
        register(fp32_spec(name, _logged(name)))
