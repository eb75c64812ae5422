"""The tests one ``gemmreg.testing.matrix()`` generates: one per planned case,
one per skip with its reason, and one failing test for a kernel that is not
there, carrying the plugin's own load error.

Kept apart from the pytest hooks (:mod:`gemmreg.testing`) because it is plain
planning: which cases, which skips, which ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, cast

import attrs
from gemmreg.contract.task_kinds import SANITIZE, VALUES, CaseKind

if TYPE_CHECKING:
    from gemmreg.checking.matrix import Case
    from gemmreg.discovery.registry_records import RegisteredKernel

Lookup = Callable[[str], "RegisteredKernel"]
"""Kernel name -> RegisteredKernel; raises LookupError with the reason it is not there."""


@attrs.frozen(kw_only=True)
class MatrixParam:
    """What one generated test runs: a planned case, or a skip with its reason."""

    kernel: str
    kind: CaseKind | Literal["load"]
    """The case's kind, or ``load`` for the test of a kernel that did not load."""
    case: Case | None
    """None for the test of a kernel that did not load."""
    skip_reason: str = ""
    tool: str = ""
    load_error: str = ""
    """Why the kernel is not there to test: the test fails with it."""

    @property
    def id(self) -> str:
        from gemmreg.checking.check_runner import CaseResult

        if self.load_error or self.case is None:
            return f"{self.kernel}-not-loaded"
        kind = cast("CaseKind", self.kind)  # "load" goes with a load_error, handled above
        return CaseResult(
            kernel=self.kernel, case=self.case, kind=kind, tool=self.tool, status="skip"
        ).id


def _loaded(lookup: Lookup, name: str) -> RegisteredKernel | MatrixParam:
    """The kernel, or the failing test that says why it is not there."""
    try:
        return lookup(name)
    except LookupError as error:  # the plugin's own error, not "unknown plugin"
        return MatrixParam(kernel=name, kind="load", case=None, load_error=str(error))


def case_params(
    lookup: Lookup, names: Sequence[str], cases: Sequence[Case], gpu: bool
) -> list[MatrixParam]:
    """Every planned case and every skip of the value matrix, per kernel."""
    from gemmreg.checking import check_runner

    params: list[MatrixParam] = []
    for name in names:
        kernel = _loaded(lookup, name)
        if isinstance(kernel, MatrixParam):
            params.append(kernel)
            continue
        skipped, runnable = check_runner.plan(kernel, cases, gpu)
        params += [MatrixParam(kernel=name, kind=kind, case=case) for kind, case in runnable]
        params += [
            MatrixParam(kernel=name, kind=r.kind, case=r.case, skip_reason=r.reason)
            for r in skipped
        ]
    return params


def sanitize_params(
    lookup: Lookup, names: Sequence[str], cases: Sequence[Case], tools: Sequence[str], gpu: bool
) -> list[MatrixParam]:
    """The sanitize subset per kernel and tool, skipped with the reason where
    the tool cannot run here. A kernel that is not there already has its
    failing test among the :func:`case_params`."""
    from gemmreg.checking import check_runner, sanitizer_tools
    from gemmreg.contract import backend

    kind = backend.current().kind
    params: list[MatrixParam] = []
    for name in names:
        kernel = _loaded(lookup, name)
        if isinstance(kernel, MatrixParam):
            continue
        skipped, runnable = check_runner.plan(kernel, cases, gpu)
        for tool in tools:
            why = sanitizer_tools.unavailable_reason(tool, kind)
            reason = f"sanitizer pass skipped: {why}" if why else ""
            params += [
                MatrixParam(kernel=name, kind=SANITIZE, case=case, tool=tool, skip_reason=reason)
                for planned, case in runnable
                if planned == VALUES
            ]
            params += [
                MatrixParam(
                    kernel=name, kind=SANITIZE, case=r.case, tool=tool, skip_reason=r.reason
                )
                for r in skipped
                if r.kind == VALUES
            ]
    return params
