"""The kinds of check case: a registry, one kind per module
``gemmreg.checking.check_kind_<name>``, which registers it.

A check kind is everything one kind of case is, in one place, so that a new
kind is its module (plus its test) and nothing else names it:

- its **name**: a case's ``"kind"`` in ``check.json`` (the built-in kinds'
  names are the ones saved checks hold: :mod:`gemmreg.contract.task_kinds`);
- its **cases**: :meth:`CheckKind.plan` makes them from the matrix for one
  kernel, with the skips and their reasons; the matrix pass runs every kind
  that says :attr:`CheckKind.in_matrix` (:func:`gemmreg.checking.check_runner.plan`);
- its **worker task**: :meth:`CheckKind.task` builds it and :meth:`CheckKind.run`
  runs it in the worker process (:mod:`gemmreg.commands.worker` asks this
  registry, naming no kind); a kind beside the built-in ones runs as the
  generic ``case`` task (:class:`gemmreg.workers.tasks.CaseTask`), which names
  the kind's class so that the worker finds it even where it was registered
  in the parent alone;
- its **verdict and report**: :meth:`CheckKind.judge` turns the worker's
  answer into the case's result (:class:`CaseResult`, the record here so that
  its id can ask its kind); its id, its line of evidence and its place in the
  tables are the kind's too (:mod:`gemmreg.reporting.render`).
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, cast

import attrs
from gemmreg.checking.matrix import Case
from gemmreg.checking.sanitizer_report import SanitizerVerdict
from gemmreg.contract.prefixed_modules import import_prefixed
from gemmreg.contract.records import Problem, Tolerance
from gemmreg.contract.task_kinds import CASE, VALUES, CaseKind, TaskKind
from gemmreg.discovery.availability import unsupported_reason
from gemmreg.workers.task_results import CaseAnswer, TaskResult
from gemmreg.workers.tasks import CaseTask, CheckTask

if TYPE_CHECKING:
    from gemmreg.contract.records import KernelSpec
    from gemmreg.discovery.registry import RegisteredKernel
    from gemmreg.discovery.registry_records import Registry

CHECK_KIND_MODULE_PREFIX = "check_kind_"
"""A module of :mod:`gemmreg.checking` named so defines (and registers) a check kind."""
NEEDS_A_GPU = "needs a GPU (its inputs are several GB)"

CaseStatus = Literal["pass", "fail", "skip", "error", "crashed", "timeout"]
BAD_STATUSES: tuple[CaseStatus, ...] = ("fail", "error", "crashed", "timeout")
"""A case's statuses that fail the check."""


@attrs.frozen(kw_only=True)
class CaseResult:
    """One check case's result: what a check keeps (``check.json``) and every
    renderer reads. Its id and its evidence are its kind's to say."""

    kernel: str
    case: Case
    status: CaseStatus
    kind: CaseKind = VALUES
    """The name of its check kind (a saved check's are checked against the registry)."""
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
        """The case's id, as its check kind writes it."""
        return self.case.id(self.kernel) + get(self.kind).id_suffix(self)

    @property
    def max_error(self) -> float | None:
        return None if self.comparison is None else self.comparison.get("max_error")

    @property
    def tolerance(self) -> Tolerance | None:
        """The bound this case's values were held to, as the worker applied it:
        None where nothing was compared, and in a check saved before it was kept."""
        held = (self.comparison or {}).get("tolerance")
        return Tolerance(**held) if isinstance(held, dict) else None


def first_bad(comparison: Mapping[str, object]) -> str:
    """The first elements out of tolerance, as the check recorded them:
    ``[row, column, got, want]`` each."""
    bad = cast("Sequence[tuple[int, int, float, float]]", comparison.get("first_bad") or ())
    if not bad:
        return ""
    shown = "; ".join(f"[{i},{j}] got {g:.6g} want {w:.6g}" for i, j, g, w in bad[:3])
    return f"; first bad: {shown}"


class CheckKind(abc.ABC):
    """One kind of check case: its cases, its worker task, its verdict and report."""

    name: ClassVar[str]
    """A case's ``"kind"``: in ``check.json``, and its key here."""
    rank: ClassVar[int] = 100
    """Its place in a kernel's plan (its cases run after lower ranks')."""
    in_matrix: ClassVar[bool] = True
    """The matrix pass plans and runs it (``sanitize``'s cases are the sanitizer pass's)."""
    task_kind: ClassVar[TaskKind | None] = CASE
    """The worker task its cases run as: the generic ``case``, or its own
    record; None where another kind's task runs them (``sanitize``: ``values``)."""
    answer: ClassVar[type] = CaseAnswer
    """The record its worker task returns."""
    counts_as_run: ClassVar[bool] = True
    """A case of it that ran exercised the kernel (a refusal only hands it a
    problem to refuse: a check where refusals alone ran ran nothing)."""
    under_tool: ClassVar[bool] = False
    """Its cases ran under a sanitizer tool: the check table gets that column."""

    def plan(
        self, kernel: RegisteredKernel, cases: Sequence[Case], gpu: bool
    ) -> tuple[list[CaseResult], list[Case]]:
        """Its cases for ``kernel``: those skipped (with reasons) and those to
        run. By default every matrix case the kernel declares and can run here."""
        return supported_cases(kernel, cases, gpu, self.name)

    def task(self, kernel: str, case: Case) -> CheckTask:
        """The worker task of one of its cases: by default the generic ``case``."""
        return CaseTask(
            check=self.name,
            where=reference(type(self)),
            kernel=kernel,
            problem=case.problem,
            seed=case.seed,
            values=case.values,
        )

    def run(self, spec: KernelSpec, task: CheckTask) -> TaskResult:
        """In the worker process: run one case's task on the kernel ``spec``."""
        raise NotImplementedError(f"check kind {self.name!r} runs no worker task")

    def judge(self, kernel: str, case: Case, answer: TaskResult) -> CaseResult:
        """The case's result from its worker's answer (of type :attr:`answer`)."""
        assert isinstance(answer, CaseAnswer)
        status: CaseStatus = "pass" if answer.passed else "fail"
        return CaseResult(
            kernel=kernel,
            case=case,
            kind=self.name,
            status=status,
            reason=answer.reason,
            comparison=answer.comparison,
        )

    def id_suffix(self, result: CaseResult) -> str:
        """What follows the matrix case's id in this kind's case id."""
        return f"-{self.name}"

    def detail(self, result: CaseResult) -> str:
        """One line of evidence for a case: its reason (or its status), and
        the first bad elements where it recorded them."""
        text = result.reason.strip().splitlines()[0] if result.reason.strip() else result.status
        return text + first_bad(result.comparison or {})

    def noted(self, result: CaseResult) -> bool:
        """A passing case with a reason gets a row of its own (the reason says
        how it was judged), rather than being counted in its group's row."""
        return bool(result.reason)

    def group_label(self) -> str:
        """After the count in the row that groups its passing cases."""
        return f" ({self.name})"

    def summary_check(self, result: CaseResult) -> str | None:
        """Its row's ``check`` in the sanitizer pass's summary, or None for no row."""
        return None


def supported_cases(
    kernel: RegisteredKernel, cases: Sequence[Case], gpu: bool, kind: str
) -> tuple[list[CaseResult], list[Case]]:
    """The cases ``kernel`` declares and can run here; the others skipped with why."""
    spec = kernel.spec
    why_not = kernel.unavailable
    skipped: list[CaseResult] = []
    runnable: list[Case] = []
    for case in cases:
        reason = why_not or unsupported_reason(spec, case.problem)
        if not reason and case.gpu_only and not gpu:
            reason = NEEDS_A_GPU
        if reason:
            skipped.append(
                CaseResult(kernel=spec.name, case=case, kind=kind, status="skip", reason=reason)
            )
        else:
            runnable.append(case)
    return skipped, runnable


_REGISTRY: dict[str, CheckKind] = {}
K = TypeVar("K", bound=CheckKind)


def register(cls: type[K]) -> type[K]:
    """Register the check kind ``cls`` defines (a class decorator, in its module)."""
    if cls.name in _REGISTRY:
        raise ValueError(f"check kind {cls.name!r} is registered already")
    _REGISTRY[cls.name] = cls()
    return cls


def unregister(name: str) -> None:
    """Take the check kind ``name`` out of the registry (a test's own kind)."""
    del _REGISTRY[name]


def names() -> list[str]:
    """The registered check kinds, by rank."""
    return sorted(_REGISTRY, key=lambda name: (_REGISTRY[name].rank, name))


def get(name: str) -> CheckKind:
    """The check kind ``name``; ValueError naming the known ones if none."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown check kind {name!r} (known: {', '.join(names())})")
    return _REGISTRY[name]


def in_matrix() -> list[CheckKind]:
    """The kinds the matrix pass plans, in their order."""
    return [kind for kind in map(get, names()) if kind.in_matrix]


def reference(cls: type[CheckKind]) -> str:
    """``module:QualifiedName``: where a worker process finds the class."""
    return f"{cls.__module__}:{cls.__qualname__}"


def for_task(task: CheckTask) -> CheckKind:
    """The kind whose case ``task`` is: a generic ``case`` task names its
    kind's class, imported here if this process has not registered it (a
    worker, for a kind its parent registered); any other, by its task kind."""
    if isinstance(task, CaseTask):
        known = _REGISTRY.get(task.check)
        if known is not None and reference(type(known)) == task.where:
            return known
        return _imported(task.check, task.where)
    for kind in _REGISTRY.values():
        if kind.task_kind == task.kind:
            return kind
    raise ValueError(f"no check kind runs {task.kind!r} tasks")


def _imported(name: str, where: str) -> CheckKind:
    module, _, qualname = where.partition(":")
    found: object = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    if not (isinstance(found, type) and issubclass(found, CheckKind) and found.name == name):
        raise ValueError(f"{where} is not the check kind {name!r}")
    return found()


def run_case(registry: Registry, task: CheckTask) -> TaskResult:
    """In the worker process: run one check case's task, as its kind says."""
    return for_task(task).run(registry.get(task.kernel).spec, task)


# Every check_kind_* module, each registering its kind: a new kind's module
# is found by its name, with no line here.
import_prefixed("gemmreg.checking", CHECK_KIND_MODULE_PREFIX)
