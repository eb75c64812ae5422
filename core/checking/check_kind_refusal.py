"""The ``refusal`` check kind: one problem just outside what the kernel
declares (:func:`gemmreg.checking.matrix.refusal_problem`), which it must
refuse with an error (:func:`gemmreg.checking.refusals.refusal_case`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from gemmreg.checking import check_kinds
from gemmreg.checking.check_kinds import CaseResult, CaseStatus
from gemmreg.checking.matrix import Case, refusal_problem
from gemmreg.contract.records import Problem
from gemmreg.contract.task_kinds import REFUSAL, TaskKind
from gemmreg.workers.task_results import RefusalResult, TaskResult
from gemmreg.workers.tasks import CheckTask, RefusalTask

if TYPE_CHECKING:
    from gemmreg.contract.records import KernelSpec
    from gemmreg.discovery.registry import RegisteredKernel

NOTHING_TO_REFUSE = "declares every dtype and layout: nothing to refuse"


@check_kinds.register
class Refusal(check_kinds.CheckKind):
    name: ClassVar[str] = REFUSAL
    rank: ClassVar[int] = 20
    task_kind: ClassVar[TaskKind | None] = REFUSAL
    answer: ClassVar[type] = RefusalResult
    counts_as_run: ClassVar[bool] = False

    def plan(
        self, kernel: RegisteredKernel, cases: Sequence[Case], gpu: bool
    ) -> tuple[list[CaseResult], list[Case]]:
        """One case per kernel, whatever the matrix: skipped where the kernel
        declares everything, or cannot run here."""
        spec = kernel.spec
        refusal = refusal_problem(spec)
        if refusal is None:
            case = Case(problem=Problem(m=17, n=19, k=23))
            return [self._skip(spec.name, case, NOTHING_TO_REFUSE)], []
        if kernel.unavailable:
            return [self._skip(spec.name, Case(problem=refusal), kernel.unavailable)], []
        return [], [Case(problem=refusal)]

    def _skip(self, kernel: str, case: Case, reason: str) -> CaseResult:
        return CaseResult(kernel=kernel, case=case, kind=REFUSAL, status="skip", reason=reason)

    def task(self, kernel: str, case: Case) -> RefusalTask:
        return RefusalTask(kernel=kernel, problem=case.problem)

    def run(self, spec: KernelSpec, task: CheckTask) -> TaskResult:
        from gemmreg.checking.refusals import refusal_case

        return refusal_case(spec, task.problem)

    def judge(self, kernel: str, case: Case, answer: TaskResult) -> CaseResult:
        assert isinstance(answer, RefusalResult)
        status: CaseStatus = "pass" if answer.passed else "fail"
        return CaseResult(
            kernel=kernel, case=case, kind=REFUSAL, status=status, reason=answer.reason
        )

    def id_suffix(self, result: CaseResult) -> str:
        return "-refuses-unsupported"

    def detail(self, result: CaseResult) -> str:
        """Its reason: how the kernel refused, or why that was wrong."""
        return result.reason.strip().splitlines()[0] if result.reason.strip() else result.status

    def noted(self, result: CaseResult) -> bool:
        return False  # its reason is how it refused, on every pass
