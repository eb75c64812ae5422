"""The pieces of a comparison that do not depend on where its processes run:
which kernels are asked, each process's task, a process's outcome as rows,
the survivors of the cold starts, and the report with its verdicts. The
local comparison (:mod:`gemmreg.timing.comparing`) and the one on a Ray
cluster (:mod:`gemmreg.fanout.ray_compare`) share them, so the two
judge alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
from gemmreg.contract.records import Problem
from gemmreg.discovery.availability import unsupported_reason
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.timing import rounds, stats
from gemmreg.timing.device_processes import Profiles
from gemmreg.timing.look_verdicts import interrupted, undecided, verdicts
from gemmreg.timing.summaries import summarize
from gemmreg.timing.timing_options import DEFAULT_L2
from gemmreg.timing.timing_records import (
    ColdStart,
    CompareReport,
    KernelSummary,
    ProcessRecord,
    ProcessRun,
    Verdict,
)
from gemmreg.workers import isolation
from gemmreg.workers.task_results import RoundsResult
from gemmreg.workers.tasks import RoundsTask


@attrs.frozen(kw_only=True)
class Asked:
    """What a comparison was asked: the point, how to time it, how to judge."""

    problem: Problem
    processes: int
    seed: int
    clock: str
    device_name: str
    gpu: bool
    repeats: int | None = None
    warmup: int | None = None
    max_time_s: float | None = None
    margin: float
    confidence: float
    l2: str = DEFAULT_L2
    """What the flush before each sample leaves in L2 (a GPU's; ``compare --l2``)."""
    budget_s: float | None = None
    """Seconds of timed processes a sequential run may spend (``--budget``;
    :mod:`gemmreg.timing.sequential`), ``processes`` being its first batch;
    None: exactly ``processes``."""
    family: int = 1
    """The points judged together (``CompareReport.family``)."""

    def rounds_task(self, process: int, names: list[str]) -> RoundsTask:
        """Process ``process``'s task: the same for every process but its order seed."""
        return RoundsTask(
            kernels=names,
            problem=self.problem,
            seed=self.seed,
            order_seed=rounds.order_seed(self.problem.label, process, self.seed),
            gpu=self.gpu,
            repeats=self.repeats,
            warmup=self.warmup,
            max_time_s=self.max_time_s,
            l2=self.l2,
        )


def split_runnable(
    kernels: Sequence[RegisteredKernel], problem: Problem
) -> tuple[list[ProcessRun], list[RegisteredKernel]]:
    """The rows of the kernels that cannot run here or were not made for
    ``problem`` (skipped, with the reason), and the others."""
    skipped: list[ProcessRun] = []
    runnable: list[RegisteredKernel] = []
    for kernel in kernels:
        reason = kernel.unavailable or unsupported_reason(kernel.spec, problem)
        if reason:
            skipped.append(
                ProcessRun(kernel=kernel.name, process=0, status="skipped", reason=reason)
            )
        else:
            runnable.append(kernel)
    return skipped, runnable


def not_timed(
    survivors: Sequence[RegisteredKernel],
    failed: dict[str, str],
    need: int,
    on_run: Callable[[ProcessRun], None] | None,
) -> list[ProcessRun]:
    """The kernels left untimed because too few survived their cold starts."""
    which = ", ".join(f"{name}: {status}" for name, status in failed.items())
    reason = (
        f"not timed: the timing needs {need} kernels and only {len(survivors)} "
        f"came through the cold starts (failed there: {which})"
    )
    runs = [
        ProcessRun(kernel=k.name, process=0, status="skipped", reason=reason) for k in survivors
    ]
    for run in runs:
        if on_run is not None:
            on_run(run)
    return runs


def from_outcome(
    names: Sequence[str], process: int, outcome: isolation.TaskOutcome
) -> tuple[list[ProcessRun], ProcessRecord]:
    """One process's rows and record, from its task's outcome."""
    if outcome.status != "ok" or not isinstance(outcome.result, RoundsResult):
        failed = [
            ProcessRun(kernel=n, process=process, status=outcome.status, reason=outcome.error)
            for n in names
        ]
        return failed, ProcessRecord(process=process, status=outcome.status, reason=outcome.error)
    from gemmreg.timing.process_results import read_process

    return read_process(names, process, outcome.result)


def hold_note(records: Sequence[ProcessRecord]) -> str:
    """What the clock line adds where some process could not hold its stream
    (:mod:`gemmreg.instruments.stream_hold`): those batches were led by a spin, so
    a slow host could show in their samples; and where a hold gave up and its
    batch was taken again (the retaken batches are all that count)."""
    note = ""
    unheld = [r for r in records if r.queued]
    if unheld:
        which = ", ".join(str(r.process) for r in unheld)
        note = f"; process {which}: {unheld[0].queued}"
    retaken = [r for r in records if r.retakes]
    if retaken:
        which = ", ".join(f"{r.process} ({len(r.retakes)})" for r in retaken)
        note += (
            f"; batches taken again after their hold gave up, in process {which}"
            f" (first: {retaken[0].retakes[0]})"
        )
    return note


def build_report(
    asked: Asked,
    kernels: Sequence[RegisteredKernel],
    runs: Sequence[ProcessRun],
    records: Sequence[ProcessRecord],
    colds: Sequence[ColdStart],
    profiles: Profiles,
    partial: bool,
    device_index: int | None = None,
    looks: Sequence[int] = (),
    look_s: Sequence[float] = (),
) -> CompareReport:
    """The report: each kernel's summary over its processes, and the verdicts
    (none on partial data), at each of ``looks`` in a sequential run (taken
    ``look_s`` seconds into its processes)."""
    summaries = _summaries(asked, kernels, runs, colds, profiles, partial=partial)
    judged = _judged(asked, summaries, records, looks, look_s)
    if partial:
        judged = interrupted(judged, records)
    return CompareReport(
        problem=asked.problem,
        processes=looks[-1] if looks else asked.processes,
        repeats=asked.repeats,
        warmup=asked.warmup,
        seed=asked.seed,
        clock=asked.clock + hold_note(records),
        device_name=asked.device_name,
        summaries=summaries,
        verdicts=judged,
        runs=tuple(runs),
        cold=tuple(colds),
        records=tuple(records),
        profiles=profiles,
        margin=asked.margin,
        confidence=asked.confidence,
        family=asked.family,
        partial=partial,
        device_index=device_index,
        l2=asked.l2 if asked.gpu else "",
        looks=tuple(looks),
        look_s=tuple(look_s),
        budget_s=asked.budget_s if looks else None,
    )


def still_undecided(
    asked: Asked,
    kernels: Sequence[RegisteredKernel],
    runs: Sequence[ProcessRun],
    records: Sequence[ProcessRecord],
    colds: Sequence[ColdStart],
    looks: Sequence[int],
) -> bool:
    """Whether some pair is undecided at the last of ``looks``: a sequential
    run's question before it starts another batch (judged as the report
    will be, less the device profiles taken after the timing)."""
    summaries = _summaries(asked, kernels, runs, colds, {}, partial=False)
    return undecided(_judged(asked, summaries, records, looks))


def _judged(
    asked: Asked,
    summaries: Sequence[KernelSummary],
    records: Sequence[ProcessRecord],
    looks: Sequence[int],
    look_s: Sequence[float] = (),
) -> tuple[Verdict, ...]:
    return verdicts(
        summaries,
        records,
        confidence=stats.family_confidence(asked.confidence, asked.family),
        margin=asked.margin,
        processes=asked.processes,
        looks=looks,
        look_s=look_s,
        budget_s=asked.budget_s,
    )


def _summaries(
    asked: Asked,
    kernels: Sequence[RegisteredKernel],
    runs: Sequence[ProcessRun],
    colds: Sequence[ColdStart],
    profiles: Profiles,
    *,
    partial: bool,
) -> tuple[KernelSummary, ...]:
    by_cold = {c.kernel: c for c in colds}
    return tuple(
        summarize(
            k,
            asked.problem,
            [r for r in runs if r.kernel == k.name],
            by_cold.get(k.name),
            asked.device_name,
            profiles.get(k.name),
            partial=partial,
        )
        for k in kernels
    )
