"""``gemmreg check``: the shared correctness cases, run in worker processes.

Cases come from the core, never from plugins: the seed chapter's edge shapes
(section 11.4) plus a mid-size square, for every declared dtype. A case outside
a kernel's capabilities is *skipped (reason)*; a case inside them that goes
wrong is a failure, with the evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import attrs
from gemmreg import isolation
from gemmreg.availability import unavailable_reason, unsupported_reason
from gemmreg.records import DType, Problem
from gemmreg.registry import RegisteredKernel

EDGE_SHAPES: tuple[tuple[int, int, int], ...] = (
    (1, 1, 1),
    (3, 5, 7),
    (15, 17, 19),
    (17, 19, 23),
    (31, 33, 29),
)
"""The seed's edge shapes (MxNxK): every axis off the tile, tiny and odd."""
MID_SQUARE_GPU = 512
"""The seed's main shape; also the mid-size check on a GPU."""
MID_SQUARE_CPU = 128
"""Mid-size check on the CPU, where Triton's interpreter takes ~16 s at 512^3."""
DEFAULT_SEED = 20260719
"""The seed chapter's seed."""
CHECK_TASK_TIMEOUT_S = 300.0
"""A single check case that takes longer than this is called hung."""

CaseStatus = Literal["pass", "fail", "skip", "error", "crashed", "timeout"]


@attrs.frozen(kw_only=True)
class CaseResult:
    kernel: str
    problem: Problem
    seed: int
    status: CaseStatus
    reason: str = ""
    comparison: dict[str, Any] | None = None

    @property
    def max_error(self) -> float | None:
        return None if self.comparison is None else self.comparison.get("max_error")


def default_problems(dtypes: Sequence[DType], gpu: bool) -> list[Problem]:
    mid = MID_SQUARE_GPU if gpu else MID_SQUARE_CPU
    shapes = [*EDGE_SHAPES, (mid, mid, mid)]
    return [Problem(m=m, n=n, k=k, dtype=dtype) for dtype in dtypes for m, n, k in shapes]


def run_check(
    kernels: Iterable[RegisteredKernel],
    problems: Sequence[Problem],
    seed: int = DEFAULT_SEED,
    on_result: Callable[[CaseResult], None] | None = None,
    task_timeout: float = CHECK_TASK_TIMEOUT_S,
) -> list[CaseResult]:
    """Check every kernel on every problem; one worker process per kernel."""
    results: list[CaseResult] = []

    def record(result: CaseResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    for kernel in kernels:
        spec = kernel.spec
        why_not = unavailable_reason(spec)
        runnable: list[Problem] = []
        for problem in problems:
            reason = why_not or unsupported_reason(spec, problem)
            if reason:
                record(
                    CaseResult(
                        kernel=spec.name, problem=problem, seed=seed, status="skip", reason=reason
                    )
                )
            else:
                runnable.append(problem)
        if not runnable:
            continue
        tasks = [
            {"kind": "check", "kernel": spec.name, "problem": attrs.asdict(p), "seed": seed}
            for p in runnable
        ]

        def settle(
            index: int,
            outcome: isolation.TaskOutcome,
            name: str = spec.name,
            problems_run: list[Problem] = runnable,
        ) -> None:
            record(_case_from_outcome(name, problems_run[index], seed, outcome))

        isolation.run_tasks(tasks, task_timeout=task_timeout, on_outcome=settle)
    return results


def _case_from_outcome(
    name: str, problem: Problem, seed: int, outcome: isolation.TaskOutcome
) -> CaseResult:
    if outcome.status != "ok" or outcome.result is None:
        return CaseResult(
            kernel=name, problem=problem, seed=seed, status=outcome.status, reason=outcome.error
        )
    comparison = outcome.result
    passed = comparison["passed"]
    return CaseResult(
        kernel=name,
        problem=problem,
        seed=seed,
        status="pass" if passed else "fail",
        reason="" if passed else comparison["reason"],
        comparison=comparison,
    )


def exit_code(results: Iterable[CaseResult]) -> int:
    """0 when everything that ran passed, 1 on any failure, error, crash or hang."""
    bad = {"fail", "error", "crashed", "timeout"}
    return 1 if any(r.status in bad for r in results) else 0
