"""Refusals decided in the parent before any worker starts: problems whose
operands can never fit on the device, and timing runs with too few plugins
that can run. Both are bad input (exit 2): nothing is timed for 30 s only to
end with no verdict."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gemmreg.contract.backend import BackendInfo
from gemmreg.contract.options import UsageError
from gemmreg.contract.records import Problem
from gemmreg.discovery.availability import unsupported_reason
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.timing.device_memory import memory_refusal


def refuse_unfit(problems: Iterable[Problem], info: BackendInfo) -> None:
    """Refuse the first problem whose A, B and C cannot fit in memory."""
    for problem in problems:
        reason = memory_refusal(problem, info)
        if reason:
            raise UsageError(f"{reason}: refused before any worker started")


def not_runnable(kernels: Sequence[RegisteredKernel], problem: Problem) -> dict[str, str]:
    """Why each kernel that cannot time ``problem`` here cannot, by name."""
    reasons = {}
    for kernel in kernels:
        reason = kernel.unavailable or unsupported_reason(kernel.spec, problem)
        if reason:
            reasons[kernel.name] = reason
    return reasons


def require_runnable(
    kernels: Sequence[RegisteredKernel], problems: Sequence[Problem], minimum: int, command: str
) -> None:
    """At least ``minimum`` kernels must be able to run some problem, or the
    command stops here naming why each one cannot."""
    blocked: dict[str, str] = {}
    runnable = set()
    for problem in problems:
        reasons = not_runnable(kernels, problem)
        runnable |= {k.name for k in kernels if k.name not in reasons}
        for name, reason in reasons.items():
            blocked.setdefault(name, reason)
    if len(runnable) >= minimum:
        return
    why = "; ".join(f"{name}: {blocked[name]}" for name in blocked if name not in runnable)
    need = "two plugins that can run" if minimum == 2 else "a plugin that can run"
    can = ", ".join(sorted(runnable)) or "none"
    raise UsageError(f"{command} needs {need} here (runnable: {can}); {why}")
