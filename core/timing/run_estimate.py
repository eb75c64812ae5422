"""How long a timing run will take, estimated before it starts, and the one
warning line printed when that is long (a large sweep under Triton's
interpreter can take hours: the README's ``--shape 256:2048:256`` is about
a day on the CPU).

The estimate is rough by design: it is there to tell minutes from hours. A
point costs, per process, the sampling cap plus a fixed cost per kernel
(its heat soak, checks and graph replays), and, for a kernel under the
interpreter, the calls it must make whatever the cap (a soak, the minimum
rounds, a check before and after), each scaled from a 512^3 call by 2MNK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the command line imports this module before it needs either
    from gemmreg.contract.records import Problem
    from gemmreg.timing.timing_options import Policy

LONG_RUN_S = 600.0
"""A run estimated to take longer than this is announced with a warning
before it starts (ten minutes: longer than anyone waits without asking)."""
INTERPRETER_S_AT_512 = 16.0
"""Seconds one 512^3 call takes under Triton's interpreter on this project's
CPU machines; other sizes scale with 2MNK."""
INTERPRETER_REFERENCE_FLOPS = 2 * 512**3
PER_KERNEL_OVERHEAD_S = 0.4
"""Seconds per kernel and process beyond its soak and sampling: preparing,
the checks before and after, graph replays. On the H200 the 18-point sweep of
6 kernels x 5 processes took 430 s, ~4.8 s per process with a 1 s cap: about
1 + 6 x (0.25 s soak + 0.4 s)."""
CHECK_CALLS = 2
"""Interpreted calls outside the rounds: the output check before and after."""


def interpreted_call_s(problem: Problem) -> float:
    """One call under Triton's interpreter, scaled by 2MNK from a 512^3 call."""
    return INTERPRETER_S_AT_512 * problem.flops / INTERPRETER_REFERENCE_FLOPS


def point_s(problem: Problem, interpreted: Sequence[bool], processes: int, policy: Policy) -> float:
    """One point's seconds: ``interpreted`` holds, per kernel, whether it
    runs under the interpreter."""
    per_process = policy.stop.max_time_s if policy.stop.max_time_s != float("inf") else 0.0
    per_process += len(interpreted) * (policy.soak_min_s + PER_KERNEL_OVERHEAD_S)
    calls = policy.soak_min_calls + policy.stop.min_rounds + CHECK_CALLS
    per_process += sum(interpreted) * calls * interpreted_call_s(problem)
    return processes * per_process


def run_s(
    problems: Sequence[Problem], interpreted: Sequence[bool], processes: int, policy: Policy
) -> float:
    """Every point's seconds, added up."""
    return sum(point_s(p, interpreted, processes, policy) for p in problems)


def duration(seconds: float) -> str:
    """``45s``, ``4m05s``, ``2h13m``, ``3d04h``: short enough for a progress line."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    if whole < 86400:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 86400}d{whole % 86400 // 3600:02d}h"


def long_run_warning(
    estimate_s: float, points: int, processes: int, interpreted: int, command: str
) -> str | None:
    """The warning line for a run estimated over :data:`LONG_RUN_S`, naming
    how to shorten it; None for a shorter one."""
    if estimate_s <= LONG_RUN_S:
        return None
    why = (
        f", {interpreted} kernel{'s' if interpreted != 1 else ''} under Triton's interpreter "
        f"(~{INTERPRETER_S_AT_512:g} s per 512^3 call)"
        if interpreted
        else ""
    )
    shorter = ["fewer or smaller shapes"] if command == "bench" else ["a smaller --shape"]
    shorter += ["--processes 1"] if processes > 1 else []
    shorter += ["--repeats 3"] if interpreted else ["--max-time 0.5"]
    return (
        f"warning: this {command} may take ~{duration(estimate_s)} "
        f"({points} point{'s' if points != 1 else ''} x {processes} processes{why}); "
        f"to shorten it: {', '.join(shorter)}"
    )
