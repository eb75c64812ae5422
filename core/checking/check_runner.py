"""``gemmreg check``: the correctness matrix, run in worker processes.

Cases come from :mod:`gemmreg.checking.matrix`, never from plugins; each check
kind (:mod:`gemmreg.checking.check_kinds`) makes its own from it, builds their
worker tasks and judges their answers, and this module runs them whatever
their kind. A case outside a kernel's capabilities is *skipped (reason)*; a
case inside them that goes wrong is a failure, with the evidence. Each kernel
also gets one problem it does not declare, which it must refuse with an error
(the ``refusal`` kind: :mod:`gemmreg.checking.refusals`).
A kernel's first hung case skips its remaining cases (:mod:`gemmreg.workers.timeouts`):
a plugin that hangs costs one timeout, not one per case. Likewise after
:data:`LOST_WORKERS_IN_A_ROW` cases in a row that each crashed their worker or
poisoned its GPU context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import attrs
from gemmreg.checking import check_kinds, memory_retry
from gemmreg.checking.check_kind_values import values_task as values_task

# Re-exported: their home was here.
from gemmreg.checking.check_kinds import BAD_STATUSES as BAD_STATUSES
from gemmreg.checking.check_kinds import CaseResult as CaseResult
from gemmreg.checking.check_kinds import CaseStatus as CaseStatus
from gemmreg.checking.matrix import Case
from gemmreg.contract.task_kinds import CaseKind as CaseKind
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.workers import isolation, timeouts
from gemmreg.workers.tasks import CheckTask

LOST_WORKERS_IN_A_ROW = 3
"""After this many of a kernel's cases in a row each crashed their worker or
left its GPU context unusable, its remaining cases are skipped, naming the
last error. Every such case costs a fresh worker (torch, plugins and a GPU
context: ~8 s on the H200; 26 cases of a kernel that poisons every launch
took 249 s). Three in a row is a kernel that faults on everything; one that
crashes only on some edge shapes is interrupted by cases that pass, so each
of its crashing shapes still shows."""


def plan(
    kernel: RegisteredKernel, cases: Sequence[Case], gpu: bool
) -> tuple[list[CaseResult], list[tuple[CaseKind, Case]]]:
    """Split a kernel's cases into those skipped (with reasons) and those to
    run: every check kind the matrix pass runs plans its own, in rank order."""
    skipped: list[CaseResult] = []
    runnable: list[tuple[CaseKind, Case]] = []
    for kind in check_kinds.in_matrix():
        not_run, to_run = kind.plan(kernel, cases, gpu)
        skipped += not_run
        runnable += [(kind.name, case) for case in to_run]
    return skipped, runnable


def task_for(kernel: str, kind: CaseKind, case: Case) -> CheckTask:
    """The worker task of a planned case, as its check kind builds it."""
    return check_kinds.get(kind).task(kernel, case)


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
    judge = check_kinds.get(kind)
    if result is None or not isinstance(
        result, judge.answer
    ):  # a worker's answer of the wrong kind
        why = f"the worker answered a {kind} case with {type(result).__name__}"
        return CaseResult(kernel=name, case=case, kind=kind, status="error", reason=why)
    return judge.judge(name, case, result)


def exit_code(results: Iterable[CaseResult]) -> int:
    """0 when everything that ran passed, 1 on any failure, error, crash or hang."""
    return 1 if any(r.status in BAD_STATUSES for r in results) else 0
