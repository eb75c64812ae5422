"""The tasks a runner sends a worker process, and what comes back.

One record per task kind (:mod:`gemmreg.contract.task_kinds`); each names the record
its worker returns (:mod:`gemmreg.workers.task_results`). :mod:`gemmreg.workers.task_wire`
turns both into JSON and back, on both sides of the process boundary.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import attrs
from gemmreg.contract.declaration_checks import strings
from gemmreg.contract.inputs import DEFAULT_SEED
from gemmreg.contract.records import Problem
from gemmreg.contract.task_kinds import CASE, COLD, PROFILE, REFUSAL, ROUNDS, VALUES, TaskKind
from gemmreg.workers.task_results import (
    CaseAnswer,
    KernelTiming,
    ProfileResult,
    RefusalResult,
    RoundsResult,
    TaskResult,
    ValuesResult,
)


@attrs.frozen(kw_only=True)
class ValuesTask:
    """Check one case's values (:func:`gemmreg.checking.output_check.check_case`)."""

    kind: ClassVar[TaskKind] = VALUES
    kernel: str
    problem: Problem
    seed: int
    values: str = "plugin"
    """How the inputs are drawn: a value kind of the matrix, or ``plugin``."""
    poison_shared: bool = False
    """Fill shared memory with NaN before each launch (the smempoison pass)."""


@attrs.frozen(kw_only=True)
class RefusalTask:
    """Hand the kernel a problem it does not declare (:mod:`gemmreg.checking.refusals`)."""

    kind: ClassVar[TaskKind] = REFUSAL
    kernel: str
    problem: Problem


@attrs.frozen(kw_only=True)
class CaseTask:
    """One case of a check kind registered besides values and refusal
    (:mod:`gemmreg.checking.check_kinds`): the kind, not this record, says what
    the worker does with it, so a new kind needs no record of its own."""

    kind: ClassVar[TaskKind] = CASE
    check: str
    """The check kind's name."""
    where: str
    """Where the worker finds it: ``module:QualifiedName`` of its class, so
    that a kind registered in the parent alone (a test's) is found too."""
    kernel: str
    problem: Problem
    seed: int = DEFAULT_SEED
    values: str = "normal"
    """How the inputs are drawn: a value kind of the matrix, or ``plugin``."""


@attrs.frozen(kw_only=True)
class ColdTask:
    """Prepare and first call in a fresh process (:func:`gemmreg.timing.timing.cold_start`)."""

    kind: ClassVar[TaskKind] = COLD
    kernel: str
    problem: Problem
    seed: int


@attrs.frozen(kw_only=True)
class RoundsTask:
    """Time every kernel of a comparison in rounds (:func:`gemmreg.timing.timing.measure_group`)."""

    kind: ClassVar[TaskKind] = ROUNDS
    kernels: tuple[str, ...] = attrs.field(converter=strings)
    problem: Problem
    seed: int
    order_seed: int
    gpu: bool
    repeats: int | None = None
    warmup: int | None = None
    max_time_s: float | None = None
    l2: str | None = "clean"
    """What the L2 flush before each timed call leaves (on a GPU): one of
    :data:`gemmreg.timing.timing_options.L2_STATES`, or None for no flush."""


@attrs.frozen(kw_only=True)
class ProfileTask:
    """Every kernel's device profile (:func:`gemmreg.timing.profiling.device_profiles`)."""

    kind: ClassVar[TaskKind] = PROFILE
    kernels: tuple[str, ...] = attrs.field(converter=strings)
    problem: Problem
    seed: int
    capture: bool = False
    """Instead, warm calls inside the CUDA profiler range alone, for an outside
    profiler (:func:`gemmreg.timing.profiling.capture_calls`)."""


CheckTask = ValuesTask | RefusalTask | CaseTask
"""A check case's task: what a check kind's cases run as."""
CHECK_TASK_CLASSES = (ValuesTask, RefusalTask, CaseTask)
Task = ValuesTask | RefusalTask | CaseTask | ColdTask | RoundsTask | ProfileTask

TASK_CLASSES = (*CHECK_TASK_CLASSES, ColdTask, RoundsTask, ProfileTask)
TASK_TYPES: dict[TaskKind, type[Task]] = {t.kind: t for t in TASK_CLASSES}
RESULT_TYPES: dict[TaskKind, type[TaskResult]] = {
    VALUES: ValuesResult,
    REFUSAL: RefusalResult,
    CASE: CaseAnswer,
    COLD: KernelTiming,
    ROUNDS: RoundsResult,
    PROFILE: ProfileResult,
}
"""The record each kind of task returns."""

Status = Literal["ok", "error", "crashed", "timeout", "skipped"]


@attrs.frozen(kw_only=True)
class TaskOutcome:
    """How one task ended: its result when ``ok``, else why there is none."""

    status: Status
    result: TaskResult | None = None
    error: str = ""
    traceback: str = ""
    """For ``error``: the end of the traceback of what the plugin code raised."""
    cause: int | None = None
    """For ``skipped``: the index of the task that stopped the batch."""
    skip_rule: str = ""
    """For ``skipped``: why the batch stopped (``isolation.AFTER_TIMEOUT``, or lost workers)."""
