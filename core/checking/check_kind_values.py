"""The ``values`` check kind: each matrix case the kernel declares, its output
compared with the float64 reference (:func:`gemmreg.checking.output_check.check_case`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from gemmreg.checking import check_kinds
from gemmreg.checking.check_kinds import CaseResult
from gemmreg.checking.matrix import Case
from gemmreg.contract.task_kinds import VALUES, TaskKind
from gemmreg.workers.task_results import TaskResult, ValuesResult
from gemmreg.workers.tasks import CheckTask, ValuesTask

if TYPE_CHECKING:
    from gemmreg.contract.records import KernelSpec


@check_kinds.register
class Values(check_kinds.CheckKind):
    name: ClassVar[str] = VALUES
    rank: ClassVar[int] = 10
    task_kind: ClassVar[TaskKind | None] = VALUES
    answer: ClassVar[type] = ValuesResult

    def task(self, kernel: str, case: Case) -> ValuesTask:
        return values_task(kernel, case)

    def run(self, spec: KernelSpec, task: CheckTask) -> TaskResult:
        from gemmreg.checking.output_check import check_case

        assert isinstance(task, ValuesTask)
        before = None
        if task.poison_shared:
            from gemmreg.checking.smem_poison import poison_shared_memory

            before = poison_shared_memory
        return check_case(spec, task.problem, task.seed, task.values, before)

    def judge(self, kernel: str, case: Case, answer: TaskResult) -> CaseResult:
        assert isinstance(answer, ValuesResult)
        return CaseResult(
            kernel=kernel,
            case=case,
            status="pass" if answer.passed else "fail",
            reason="" if answer.passed else answer.reason,
            comparison=answer.recorded(),
        )

    def id_suffix(self, result: CaseResult) -> str:
        return ""

    def detail(self, result: CaseResult) -> str:
        """As any kind's, except that a pass says how many elements were held
        to the tolerance, and how it was judged where its reason says."""
        if result.status != "pass":
            return super().detail(result)
        within = f"{(result.comparison or {}).get('total', '?')} elements within tolerance"
        return "; ".join([within, *result.reason.strip().splitlines()[:1]])

    def group_label(self) -> str:
        return ""

    def summary_check(self, result: CaseResult) -> str | None:
        return "values (no sanitizer)"


def values_task(kernel: str, case: Case, poison_shared: bool = False) -> ValuesTask:
    """The task that checks a case's values (``poison_shared``: smempoison's)."""
    return ValuesTask(
        kernel=kernel,
        problem=case.problem,
        seed=case.seed,
        values=case.values,
        poison_shared=poison_shared,
    )
