"""The ``sanitize`` check kind: a values case run under a sanitizer tool. Its
cases are the sanitizer pass's (:mod:`gemmreg.checking.sanitizer_pass`, which
plans them from :func:`gemmreg.checking.matrix.sanitize_cases` and runs them as
``values`` tasks under the tool: :mod:`gemmreg.checking.sanitized_runs`), not
the matrix pass's; here is what its results are and how they read."""

from __future__ import annotations

from typing import ClassVar

from gemmreg.checking import check_kinds
from gemmreg.checking.check_kinds import CaseResult, first_bad
from gemmreg.contract.task_kinds import SANITIZE, VALUES, TaskKind


@check_kinds.register
class Sanitize(check_kinds.CheckKind):
    name: ClassVar[str] = SANITIZE
    rank: ClassVar[int] = 30
    in_matrix: ClassVar[bool] = False
    task_kind: ClassVar[TaskKind | None] = None
    """Its cases run as ``values`` tasks, which the values kind runs in the worker."""
    under_tool: ClassVar[bool] = True

    def id_suffix(self, result: CaseResult) -> str:
        return f"-{result.tool}"

    def detail(self, result: CaseResult) -> str:
        """The values' side: the sanitizer's own verdict has its column."""
        comparison = result.comparison or {}
        if not comparison:
            return check_kinds.get(VALUES).detail(result)
        if comparison.get("passed"):
            return f"values: {comparison.get('total', '?')} elements within tolerance"
        return f"values: {comparison.get('reason', '')}" + first_bad(comparison)

    def summary_check(self, result: CaseResult) -> str | None:
        return result.tool
