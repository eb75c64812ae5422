"""``gemmreg compare``: the seed's timing protocol across independent processes,
and a verdict that claims "faster" only when the process ranges do not overlap.

Each of ``processes`` worker processes times every compared kernel, in an
order shuffled per process (seeded, so a run can be replayed), so that drift
over the run does not always favour the same kernel. A kernel's figure is the
median of its process medians; its range is the lowest to highest process
median. That range, not a single best number, is the claim.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from typing import Any, Literal

import attrs
from gemmreg import isolation
from gemmreg.availability import unavailable_reason, unsupported_reason
from gemmreg.records import Problem
from gemmreg.registry import RegisteredKernel

DEFAULT_PROCESSES = 3
"""Independent processes per comparison, as in the seed (section 11.5)."""
GPU_DEFAULT_SHAPE = (512, 512, 512)
GPU_DEFAULT_WARMUP = 10
GPU_DEFAULT_REPEATS = 50
CPU_DEFAULT_SHAPE = (128, 128, 128)
"""On the CPU the Triton interpreter takes ~0.25 s per 128^3 call, so the
default comparison finishes well inside a minute."""
CPU_DEFAULT_WARMUP = 2
CPU_DEFAULT_REPEATS = 10
TIMING_TASK_TIMEOUT_S = 600.0

VerdictWord = Literal["faster", "slower", "indistinguishable", "no verdict"]


@attrs.frozen(kw_only=True)
class ProcessRun:
    """One kernel, timed in one worker process."""

    kernel: str
    process: int
    status: str
    """``timed``, ``failed`` (a correctness check), ``error``, ``crashed`` or ``timeout``."""
    samples_ms: tuple[float, ...] = ()
    prepare_s: float | None = None
    first_call_s: float | None = None
    precheck: dict[str, Any] | None = None
    postcheck: dict[str, Any] | None = None
    reason: str = ""

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.samples_ms) if self.samples_ms else None


@attrs.frozen(kw_only=True)
class KernelSummary:
    kernel: str
    package: str
    precision: str
    math: str
    """The precision's math class: what "like for like" is judged on."""
    generator: str
    status: str
    """``timed`` when every process timed it and every check passed."""
    reason: str = ""
    process_medians_ms: tuple[float, ...] = ()
    center_ms: float | None = None
    low_ms: float | None = None
    high_ms: float | None = None
    tflops: float | None = None
    prepare_s: float | None = None
    first_call_s: float | None = None
    max_error: float | None = None


@attrs.frozen(kw_only=True)
class Verdict:
    baseline: str
    kernel: str
    verdict: VerdictWord
    speedup: float | None
    """baseline time / this kernel's time, from the centre values."""
    explanation: str
    notes: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class CompareReport:
    problem: Problem
    processes: int
    warmup: int
    repeats: int
    seed: int
    clock: str
    summaries: tuple[KernelSummary, ...]
    verdicts: tuple[Verdict, ...]
    runs: tuple[ProcessRun, ...]
    partial: bool = False


def summarize(
    kernel: RegisteredKernel, problem: Problem, runs: Sequence[ProcessRun]
) -> KernelSummary:
    spec = kernel.spec
    base = {
        "kernel": spec.name,
        "package": kernel.origin.package,
        "precision": str(spec.capabilities.precision.get(problem.dtype, "?")),
        "math": getattr(spec.capabilities.precision.get(problem.dtype), "math", "?"),
        "generator": spec.generator_name,
    }
    bad = [run for run in runs if run.status != "timed"]
    if not runs or bad:
        reason = "; ".join(f"process {r.process}: {r.status}: {r.reason}" for r in bad)
        return KernelSummary(**base, status=bad[0].status if bad else "error", reason=reason)
    medians = tuple(run.median_ms for run in runs if run.median_ms is not None)
    center = statistics.median(medians)
    errors = [
        check["max_error"] for r in runs for check in (r.precheck, r.postcheck) if check is not None
    ]
    return KernelSummary(
        **base,
        status="timed",
        process_medians_ms=medians,
        center_ms=center,
        low_ms=min(medians),
        high_ms=max(medians),
        tflops=problem.flops / (center * 1e-3) / 1e12,
        prepare_s=statistics.median(r.prepare_s for r in runs if r.prepare_s is not None),
        first_call_s=statistics.median(r.first_call_s for r in runs if r.first_call_s is not None),
        max_error=max(errors) if errors else None,
    )


def judge(baseline: KernelSummary, other: KernelSummary) -> Verdict:
    """Faster or slower only when the process ranges do not overlap."""
    notes = []
    if baseline.math != other.math:
        notes.append(
            f"UNLIKE PRECISION: {baseline.kernel} computes {baseline.precision}, "
            f"{other.kernel} computes {other.precision}"
        )
    if baseline.generator != other.generator:
        notes.append(f"input generators differ: {baseline.generator} vs {other.generator}")
    if baseline.status != "timed" or other.status != "timed":
        missing = other.kernel if other.status != "timed" else baseline.kernel
        return Verdict(
            baseline=baseline.kernel,
            kernel=other.kernel,
            verdict="no verdict",
            speedup=None,
            explanation=f"{missing} has no timing",
            notes=tuple(notes),
        )
    assert baseline.low_ms is not None and baseline.high_ms is not None
    assert other.low_ms is not None and other.high_ms is not None
    assert baseline.center_ms is not None and other.center_ms is not None
    speedup = baseline.center_ms / other.center_ms
    ranges = (
        f"{other.kernel} {other.low_ms:.4g}-{other.high_ms:.4g} ms vs "
        f"{baseline.kernel} {baseline.low_ms:.4g}-{baseline.high_ms:.4g} ms"
    )
    verdict: VerdictWord
    if other.high_ms < baseline.low_ms:
        verdict, how = "faster", "process ranges do not overlap"
    elif other.low_ms > baseline.high_ms:
        verdict, how = "slower", "process ranges do not overlap"
    else:
        verdict, how = "indistinguishable", "process ranges overlap: no claim"
    return Verdict(
        baseline=baseline.kernel,
        kernel=other.kernel,
        verdict=verdict,
        speedup=speedup,
        explanation=f"{how} ({ranges})",
        notes=tuple(notes),
    )


def plan_order(names: Sequence[str], process: int, seed: int) -> list[str]:
    """The order kernels are timed in one process: shuffled, reproducibly."""
    order = list(names)
    random.Random(seed * 1009 + process).shuffle(order)
    return order


def run_compare(
    kernels: Sequence[RegisteredKernel],
    problem: Problem,
    *,
    processes: int,
    warmup: int,
    repeats: int,
    seed: int,
    clock: str,
    on_run: Callable[[ProcessRun], None] | None = None,
) -> CompareReport:
    """Time ``kernels`` on ``problem``; verdicts for every pair, in the order named."""
    runs: list[ProcessRun] = []
    runnable: list[RegisteredKernel] = []
    for kernel in kernels:
        reason = unavailable_reason(kernel.spec) or unsupported_reason(kernel.spec, problem)
        if reason:
            runs.append(ProcessRun(kernel=kernel.name, process=0, status="skipped", reason=reason))
        else:
            runnable.append(kernel)

    partial = False
    try:
        for process in range(processes):
            order = plan_order([k.name for k in runnable], process, seed)
            tasks = [
                {
                    "kind": "time",
                    "kernel": name,
                    "problem": attrs.asdict(problem),
                    "seed": seed,
                    "warmup": warmup,
                    "repeats": repeats,
                }
                for name in order
            ]

            def settle(
                index: int,
                outcome: isolation.TaskOutcome,
                p: int = process,
                order: list[str] = order,
            ) -> None:
                run = _run_from_outcome(order[index], p, outcome)
                runs.append(run)
                if on_run is not None:
                    on_run(run)

            isolation.run_tasks(tasks, task_timeout=TIMING_TASK_TIMEOUT_S, on_outcome=settle)
    except KeyboardInterrupt:
        partial = True  # keep what finished; the report says it is partial

    summaries = tuple(
        summarize(k, problem, [r for r in runs if r.kernel == k.name]) for k in kernels
    )
    # Every pair, earlier-named first: the first plugin is everyone's baseline,
    # and the seed's own question (grouped vs baseline) needs pairs beyond it.
    verdicts = tuple(
        judge(summaries[i], summaries[j])
        for i in range(len(summaries))
        for j in range(i + 1, len(summaries))
    )
    return CompareReport(
        problem=problem,
        processes=processes,
        warmup=warmup,
        repeats=repeats,
        seed=seed,
        clock=clock,
        summaries=summaries,
        verdicts=verdicts,
        runs=tuple(runs),
        partial=partial,
    )


def _run_from_outcome(name: str, process: int, outcome: isolation.TaskOutcome) -> ProcessRun:
    if outcome.status != "ok" or outcome.result is None:
        return ProcessRun(kernel=name, process=process, status=outcome.status, reason=outcome.error)
    result = outcome.result
    common = {
        "kernel": name,
        "process": process,
        "prepare_s": result["prepare_s"],
        "first_call_s": result["first_call_s"],
        "precheck": result.get("precheck"),
        "postcheck": result.get("postcheck"),
    }
    for stage in ("precheck", "postcheck"):
        check = result.get(stage)
        if check is not None and not check["passed"]:
            return ProcessRun(**common, status="failed", reason=f"{stage}: {check['reason']}")
    return ProcessRun(**common, status="timed", samples_ms=tuple(result["samples_ms"]))
