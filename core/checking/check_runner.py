"""``gemmreg check``: the correctness matrix, run in worker processes.

Cases come from :mod:`gemmreg.checking.matrix`, never from plugins. A case outside a
kernel's capabilities is *skipped (reason)*; a case inside them that goes
wrong is a failure, with the evidence. Each kernel also gets one problem it
does not declare, which it must refuse with an error (:mod:`gemmreg.checking.refusals`).
A kernel's first hung case skips its remaining cases (:mod:`gemmreg.workers.timeouts`):
a plugin that hangs costs one timeout, not one per case. Likewise after
:data:`LOST_WORKERS_IN_A_ROW` cases in a row that each crashed their worker or
poisoned its GPU context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import attrs
from gemmreg.checking import memory_retry
from gemmreg.checking.matrix import Case, refusal_problem
from gemmreg.checking.sanitizer_report import SanitizerVerdict
from gemmreg.contract.records import Problem, Tolerance
from gemmreg.contract.task_kinds import REFUSAL, SANITIZE, VALUES
from gemmreg.contract.task_kinds import CaseKind as CaseKind  # re-exported: its home was here
from gemmreg.discovery.availability import unsupported_reason
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.workers import isolation, timeouts
from gemmreg.workers.task_results import RefusalResult, ValuesResult
from gemmreg.workers.tasks import RefusalTask, ValuesTask

LOST_WORKERS_IN_A_ROW = 3
"""After this many of a kernel's cases in a row each crashed their worker or
left its GPU context unusable, its remaining cases are skipped, naming the
last error. Every such case costs a fresh worker (torch, plugins and a GPU
context: ~8 s on the H200; 26 cases of a kernel that poisons every launch
took 249 s). Three in a row is a kernel that faults on everything; one that
crashes only on some edge shapes is interrupted by cases that pass, so each
of its crashing shapes still shows."""

CaseStatus = Literal["pass", "fail", "skip", "error", "crashed", "timeout"]
BAD_STATUSES: tuple[CaseStatus, ...] = ("fail", "error", "crashed", "timeout")
"""A case's statuses that fail the check."""


@attrs.frozen(kw_only=True)
class CaseResult:
    kernel: str
    case: Case
    status: CaseStatus
    kind: CaseKind = VALUES
    reason: str = ""
    comparison: dict[str, Any] | None = None
    tool: str = ""
    """For ``sanitize`` cases: the sanitizer tool the case ran under."""
    sanitizer: SanitizerVerdict | None = None
    device_index: int | None = None
    """The GPU the case ran on when the check was spread over several
    (``--devices``, torch's index in the parent); None otherwise."""
    device_name: str = ""
    """That GPU's model, or '' (not spread, or never run: a skip)."""

    @property
    def problem(self) -> Problem:
        return self.case.problem

    @property
    def id(self) -> str:
        if self.kind == SANITIZE:
            return f"{self.case.id(self.kernel)}-{self.tool}"
        suffix = "-refuses-unsupported" if self.kind == REFUSAL else ""
        return self.case.id(self.kernel) + suffix

    @property
    def max_error(self) -> float | None:
        return None if self.comparison is None else self.comparison.get("max_error")

    @property
    def tolerance(self) -> Tolerance | None:
        """The bound this case's values were held to, as the worker applied it:
        None where nothing was compared, and in a check saved before it was kept."""
        held = (self.comparison or {}).get("tolerance")
        return Tolerance(**held) if isinstance(held, dict) else None


def plan(
    kernel: RegisteredKernel, cases: Sequence[Case], gpu: bool
) -> tuple[list[CaseResult], list[tuple[CaseKind, Case]]]:
    """Split a kernel's cases into those skipped (with reasons) and those to run."""
    spec = kernel.spec
    why_not = kernel.unavailable
    skipped: list[CaseResult] = []
    runnable: list[tuple[CaseKind, Case]] = []
    for case in cases:
        reason = why_not or unsupported_reason(spec, case.problem)
        if not reason and case.gpu_only and not gpu:
            reason = "needs a GPU (its inputs are several GB)"
        if reason:
            skipped.append(CaseResult(kernel=spec.name, case=case, status="skip", reason=reason))
        else:
            runnable.append((VALUES, case))
    refusal = refusal_problem(spec)
    if refusal is None:
        skipped.append(
            CaseResult(
                kernel=spec.name,
                case=Case(problem=Problem(m=17, n=19, k=23)),
                kind=REFUSAL,
                status="skip",
                reason="declares every dtype and layout: nothing to refuse",
            )
        )
    elif why_not:
        skipped.append(
            CaseResult(
                kernel=spec.name,
                case=Case(problem=refusal),
                kind=REFUSAL,
                status="skip",
                reason=why_not,
            )
        )
    else:
        runnable.append((REFUSAL, Case(problem=refusal)))
    return skipped, runnable


def task_for(kernel: str, kind: CaseKind, case: Case) -> ValuesTask | RefusalTask:
    """The worker task of a planned case (a ``sanitize`` case's is its values task)."""
    if kind == REFUSAL:
        return RefusalTask(kernel=kernel, problem=case.problem)
    return values_task(kernel, case)


def values_task(kernel: str, case: Case, poison_shared: bool = False) -> ValuesTask:
    """The task that checks a case's values (``poison_shared``: smempoison's)."""
    return ValuesTask(
        kernel=kernel,
        problem=case.problem,
        seed=case.seed,
        values=case.values,
        poison_shared=poison_shared,
    )


def run_check(
    kernels: Iterable[RegisteredKernel],
    cases: Sequence[Case],
    gpu: bool,
    on_result: Callable[[CaseResult], None] | None = None,
    task_timeout: float | None = None,
) -> list[CaseResult]:
    """Check every kernel on every case; one worker process per kernel (a new
    one after each crash), its remaining cases skipped after a hang or after
    :data:`LOST_WORKERS_IN_A_ROW` lost workers in a row.

    :param task_timeout: Seconds each case may take (default: scaled to the
        case's problem, :func:`gemmreg.workers.timeouts.task_timeout_s`).
    """
    results: list[CaseResult] = []

    def record(result: CaseResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    for kernel in kernels:
        check_kernel(kernel, cases, gpu, record, task_timeout)
    return results


def check_kernel(
    kernel: RegisteredKernel,
    cases: Sequence[Case],
    gpu: bool,
    record: Callable[[CaseResult], None],
    task_timeout: float | None = None,
    env: dict[str, str] | None = None,
) -> None:
    """One kernel's cases, each result handed to ``record`` as it settles:
    its skips first, then its cases in order in its own workers (started
    with ``env``: a pinned GPU, :mod:`gemmreg.workers.devices`)."""
    skipped, runnable = plan(kernel, cases, gpu)
    for result in skipped:
        record(result)
    if not runnable:
        return

    tasks = [task_for(kernel.name, kind, case) for kind, case in runnable]
    limits = task_limits(runnable, gpu, task_timeout)
    short = memory_retry.ShortOfMemory()  # out of memory: tried again after the batch

    def settle(index: int, outcome: isolation.TaskOutcome) -> None:
        if short.keep(index, outcome):
            return
        kind, case = runnable[index]
        cause = cause_of(kernel.name, runnable, outcome)
        record(result_from_outcome(kernel.name, kind, case, outcome, cause))

    def settle_again(index: int, outcome: isolation.TaskOutcome, note: str) -> None:
        kind, case = runnable[index]
        result = result_from_outcome(kernel.name, kind, case, outcome)
        if note:
            result = attrs.evolve(result, reason="; ".join(filter(None, [result.reason, note])))
        record(result)

    try:
        isolation.run_tasks(
            tasks,
            task_timeout=limits,
            on_outcome=settle,
            env=env,
            skip_after_timeout=True,
            skip_after_lost_workers=LOST_WORKERS_IN_A_ROW,
        )
    except BaseException:  # interrupted: kept as they ended, not tried again
        short.settle_as_first(settle_again)
        raise
    short.try_again(tasks, settle_again, limits, env, LOST_WORKERS_IN_A_ROW)


def task_limits(
    planned: Sequence[tuple[CaseKind, Case]], gpu: bool, task_timeout: float | None
) -> list[float]:
    """Each planned case's time limit: ``task_timeout``, or scaled to its problem."""
    if task_timeout is not None:
        return [task_timeout] * len(planned)
    return [timeouts.task_timeout_s(case.problem, gpu) for _, case in planned]


def cause_of(
    name: str, planned: Sequence[tuple[CaseKind, Case]], outcome: isolation.TaskOutcome
) -> str:
    """The id of the case that stopped the batch and skipped this one ("" if none did)."""
    if outcome.cause is None:
        return ""
    kind, case = planned[outcome.cause]
    return CaseResult(kernel=name, case=case, kind=kind, status="timeout").id


def result_from_outcome(
    name: str, kind: CaseKind, case: Case, outcome: isolation.TaskOutcome, cause: str = ""
) -> CaseResult:
    """The case's result from its worker outcome (``cause``: see :func:`cause_of`)."""
    if outcome.status == "skipped":
        why = f"{cause}: {outcome.error}" if cause else outcome.error
        reason = f"skipped: {outcome.skip_rule or isolation.AFTER_TIMEOUT} ({why})"
        return CaseResult(kernel=name, case=case, kind=kind, status="skip", reason=reason)
    result = outcome.result
    if outcome.status != "ok":
        return CaseResult(
            kernel=name, case=case, kind=kind, status=outcome.status, reason=outcome.error
        )
    if not isinstance(result, RefusalResult | ValuesResult):  # a worker's answer of the wrong kind
        why = f"the worker answered a {kind} case with {type(result).__name__}"
        return CaseResult(kernel=name, case=case, kind=kind, status="error", reason=why)
    status: CaseStatus = "pass" if result.passed else "fail"
    if isinstance(result, RefusalResult):
        return CaseResult(kernel=name, case=case, kind=kind, status=status, reason=result.reason)
    return CaseResult(
        kernel=name,
        case=case,
        status=status,
        reason="" if result.passed else result.reason,
        comparison=result.recorded(),
    )


def exit_code(results: Iterable[CaseResult]) -> int:
    """0 when everything that ran passed, 1 on any failure, error, crash or hang."""
    return 1 if any(r.status in BAD_STATUSES for r in results) else 0
