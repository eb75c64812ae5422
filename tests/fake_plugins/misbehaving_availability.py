"""Kernels whose ``available()`` or capability ``constraint`` misbehaves:
raises KeyboardInterrupt or SystemExit, calls ``os._exit``, or hangs. Each is
a module-level spec (``fake_plugins.misbehaving_availability:INTERRUPTS``)."""

import os
import sys
import time

import attrs
import torch

from fake_plugins import fp32_spec

HANG_S = 600.0
CONSTRAINT_CALLS_ENV = "FAKE_CONSTRAINT_CALLS"
"""A file :data:`CONSTRAINT_HANGS`'s constraint adds a line to each time it is asked."""


def _interrupts():
    raise KeyboardInterrupt("from available()")


def _exits():
    sys.exit(3)


def _exits_hard():
    os._exit(0)


def _hangs():
    time.sleep(HANG_S)


def _spec(name, **changes):
    spec = fp32_spec(name, lambda a, b, out: torch.mm(a, b, out=out))
    return attrs.evolve(spec, **changes)


def _constraint_exits_hard(problem):
    os._exit(0)


def _constraint_hangs(problem):
    calls = os.environ.get(CONSTRAINT_CALLS_ENV)
    if calls:  # one line a call, for a test counting them across the parent and its workers
        with open(calls, "a") as log:
            log.write(f"{os.getpid()} {problem.m}x{problem.n}x{problem.k}\n")
    time.sleep(HANG_S)


INTERRUPTS = _spec("fake_available_interrupts", available=_interrupts)
EXITS = _spec("fake_available_exits", available=_exits)
EXITS_HARD = _spec("fake_available_exits_hard", available=_exits_hard)
HANGS = _spec("fake_available_hangs", available=_hangs)
CONSTRAINT_EXITS_HARD = _spec(
    "fake_constraint_exits_hard",
    capabilities=attrs.evolve(
        fp32_spec("x", print).capabilities, constraint=_constraint_exits_hard
    ),
)
CONSTRAINT_HANGS = _spec(
    "fake_constraint_hangs",
    capabilities=attrs.evolve(fp32_spec("x", print).capabilities, constraint=_constraint_hangs),
)
