"""``gemmreg compare``: the timing protocol across independent processes, and
verdicts an expert would sign.

Each of ``processes`` worker processes times every compared kernel, in an
order shuffled per process (seeded, so a run replays), so drift over the run
does not always favour the same kernel. A kernel's figure is the median of its
process medians; its range runs from the lowest to the highest process median.
"Faster" needs both a bootstrap 95% interval of the speedup that excludes 1
and process ranges that do not overlap; otherwise the verdict is
"indistinguishable". Triton's compile cache starts empty in the first process
(cold start) and is reused by the others (warm start). The same goes for
``GEMMREG_CACHE_DIR``, where plugins keep what they learn on disk (autotuning
choices): a plugin's tuning therefore counts as cold start, never as steady state.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
from collections.abc import Callable, Sequence
from typing import Any, Literal

import attrs
from gemmreg import isolation, stats
from gemmreg.availability import unavailable_reason, unsupported_reason
from gemmreg.peaks import peak_tflops
from gemmreg.records import Problem
from gemmreg.registry import RegisteredKernel

GPU_DEFAULT_PROCESSES = 5
CPU_DEFAULT_PROCESSES = 3
"""Independent processes: at least the seed's 3; 5 on a GPU by default."""
GPU_DEFAULT_SHAPE = (512, 512, 512)
CPU_DEFAULT_SHAPE = (128, 128, 128)
"""On the CPU the Triton interpreter takes ~0.25 s per 128^3 call, so the
default comparison finishes well inside a minute."""
TIMING_TASK_TIMEOUT_S = 600.0
LAUNCH_BOUND_RATIO = 0.5
"""A kernel whose launch-free (graph) time is under this fraction of its
per-launch time is labelled launch-bound: launch overhead dominates the figure..."""
LAUNCH_BOUND_MAX_MS = 0.05
"""...provided the per-launch time is this short. Graph replays run with a warm
L2; for a longer kernel the gap to its graph time is L2 warmth, not launch
overhead (a few microseconds), and the label would mislead."""
SUSPICIOUS_SPEEDUP = 10.0
"""A kernel more than this many times faster than a vendor library is flagged."""

VerdictWord = Literal["faster", "slower", "indistinguishable", "no verdict"]


@attrs.frozen(kw_only=True)
class ProcessRun:
    """One kernel, timed in one worker process."""

    kernel: str
    process: int
    status: str
    """``timed``, ``failed`` (a correctness check), ``skipped``, ``error``, ``crashed`` or ``timeout``."""
    samples_ms: tuple[float, ...] = ()
    prepare_s: float | None = None
    first_call_s: float | None = None
    cache: str = ""
    """``cold`` (compile caches empty) or ``warm`` (reused from an earlier process)."""
    graph_ms: float | None = None
    stop_reason: str = ""
    warmup_calls: int | None = None
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
    vendor_library: bool = False
    process_medians_ms: tuple[float, ...] = ()
    center_ms: float | None = None
    low_ms: float | None = None
    high_ms: float | None = None
    tflops: float | None = None
    peak_tflops: float | None = None
    percent_of_peak: float | None = None
    graph_ms: float | None = None
    launch_bound: bool = False
    tile_efficiency: float | None = None
    """Useful 2MNK over the work of the padded tiles (1.0: no tail waste)."""
    cold_prepare_s: float | None = None
    cold_first_call_s: float | None = None
    warm_prepare_s: float | None = None
    warm_first_call_s: float | None = None
    samples: int = 0
    max_error: float | None = None
    flags: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Verdict:
    baseline: str
    kernel: str
    verdict: VerdictWord
    speedup: float | None
    """baseline time / this kernel's time, from the centre values."""
    interval: tuple[float, float] | None
    """Bootstrap 95% interval of the speedup, across processes."""
    explanation: str
    notes: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class CompareReport:
    problem: Problem
    processes: int
    seed: int
    clock: str
    device_name: str
    summaries: tuple[KernelSummary, ...]
    verdicts: tuple[Verdict, ...]
    runs: tuple[ProcessRun, ...]
    repeats: int | None = None
    """Fixed samples per process, or None for the adaptive rule."""
    warmup: int | None = None
    partial: bool = False


def tile_efficiency(problem: Problem, tile: tuple[int, int, int] | None) -> float | None:
    """Useful work over the work of the padded tiles: seed 003's tail waste."""
    if tile is None:
        return None
    padded = 1
    for size, block in zip((problem.m, problem.n, problem.k), tile, strict=True):
        padded *= -(-size // block) * block
    return problem.m * problem.n * problem.k / padded


def _median_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def summarize(
    kernel: RegisteredKernel, problem: Problem, runs: Sequence[ProcessRun], device_name: str
) -> KernelSummary:
    spec = kernel.spec
    precision = spec.capabilities.precision.get(problem.dtype)
    math = precision.math if precision is not None else "?"
    base: dict[str, Any] = {
        "kernel": spec.name,
        "package": kernel.origin.package,
        "precision": str(precision) if precision is not None else "?",
        "math": math,
        "generator": spec.generator_name,
        "vendor_library": spec.vendor_library,
        "tile_efficiency": tile_efficiency(problem, spec.capabilities.tile),
    }
    bad = [run for run in runs if run.status != "timed"]
    if not runs or bad:
        if bad and all(r.status == "skipped" for r in bad):
            return KernelSummary(**base, status="skipped", reason=bad[0].reason)
        reason = "; ".join(f"process {r.process}: {r.status}: {r.reason}" for r in bad)
        return KernelSummary(**base, status=bad[0].status if bad else "error", reason=reason)
    medians = tuple(run.median_ms for run in runs if run.median_ms is not None)
    center = statistics.median(medians)
    tflops = problem.flops / (center * 1e-3) / 1e12
    peak = peak_tflops(device_name, math)
    graph = _median_or_none([r.graph_ms for r in runs])
    flags = []
    if peak is not None and tflops > peak:
        flags.append(f"ABOVE PEAK: {tflops:.4g} TFLOP/s > datasheet {peak:g} for {math}")
    errors = [check["max_error"] for r in runs for check in (r.precheck, r.postcheck) if check]
    cold = [r for r in runs if r.cache == "cold"]
    warm = [r for r in runs if r.cache != "cold"]
    return KernelSummary(
        **base,
        status="timed",
        process_medians_ms=medians,
        center_ms=center,
        low_ms=min(medians),
        high_ms=max(medians),
        tflops=tflops,
        peak_tflops=peak,
        percent_of_peak=100 * tflops / peak if peak else None,
        graph_ms=graph,
        launch_bound=graph is not None
        and center < LAUNCH_BOUND_MAX_MS
        and graph < LAUNCH_BOUND_RATIO * center,
        cold_prepare_s=_median_or_none([r.prepare_s for r in cold]),
        cold_first_call_s=_median_or_none([r.first_call_s for r in cold]),
        warm_prepare_s=_median_or_none([r.prepare_s for r in warm]),
        warm_first_call_s=_median_or_none([r.first_call_s for r in warm]),
        samples=sum(len(r.samples_ms) for r in runs),
        max_error=max(errors) if errors else None,
        flags=tuple(flags),
    )


def judge(baseline: KernelSummary, other: KernelSummary, seed: int = 0) -> Verdict:
    """Faster or slower only when the bootstrap interval of the speedup excludes 1
    and the process ranges do not overlap; anything less is no claim."""
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
            interval=None,
            explanation=f"{missing} has no timing",
            notes=tuple(notes),
        )
    assert baseline.low_ms is not None and baseline.high_ms is not None
    assert other.low_ms is not None and other.high_ms is not None
    assert baseline.center_ms is not None and other.center_ms is not None
    speedup = baseline.center_ms / other.center_ms
    low, high = stats.bootstrap_speedup(baseline.process_medians_ms, other.process_medians_ms, seed)
    separated_faster = other.high_ms < baseline.low_ms
    separated_slower = other.low_ms > baseline.high_ms
    verdict: VerdictWord
    if low > 1 and separated_faster:
        verdict, how = "faster", "interval excludes 1 and ranges do not overlap"
    elif high < 1 and separated_slower:
        verdict, how = "slower", "interval excludes 1 and ranges do not overlap"
    elif separated_faster or separated_slower:  # kept for bootstraps that can disagree
        verdict, how = "indistinguishable", "the interval includes 1: no claim"
    else:
        verdict, how = "indistinguishable", "process ranges overlap: no claim"
    for fast, slow in ((other, baseline), (baseline, other)):
        if (
            slow.vendor_library
            and fast.center_ms
            and slow.center_ms
            and slow.center_ms / fast.center_ms > SUSPICIOUS_SPEEDUP
        ):
            notes.append(
                f"SUSPICIOUS: {fast.kernel} is over {SUSPICIOUS_SPEEDUP:g}x faster than "
                f"the vendor library {slow.kernel}; check the measurement"
            )
    ranges = (
        f"{other.kernel} {other.low_ms:.4g}-{other.high_ms:.4g} ms vs "
        f"{baseline.kernel} {baseline.low_ms:.4g}-{baseline.high_ms:.4g} ms"
    )
    return Verdict(
        baseline=baseline.kernel,
        kernel=other.kernel,
        verdict=verdict,
        speedup=speedup,
        interval=(low, high),
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
    seed: int,
    clock: str,
    device_name: str,
    repeats: int | None = None,
    warmup: int | None = None,
    on_run: Callable[[ProcessRun], None] | None = None,
    task_timeout: float = TIMING_TASK_TIMEOUT_S,
    max_time_s: float | None = None,
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
    with tempfile.TemporaryDirectory(prefix="gemmreg-triton-cache-") as cache_dir:
        env = {
            **os.environ,
            "TRITON_CACHE_DIR": cache_dir,
            "GEMMREG_CACHE_DIR": os.path.join(cache_dir, "gemmreg"),
        }
        try:
            for process in range(processes):
                order = plan_order([k.name for k in runnable], process, seed)
                tasks = [
                    {
                        "kind": "time",
                        "kernel": name,
                        "problem": attrs.asdict(problem),
                        "seed": seed,
                        "repeats": repeats,
                        "warmup": warmup,
                        "max_time_s": max_time_s,
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

                isolation.run_tasks(tasks, task_timeout=task_timeout, on_outcome=settle, env=env)
        except KeyboardInterrupt:
            partial = True  # keep what finished; the report says it is partial

    summaries = tuple(
        summarize(k, problem, [r for r in runs if r.kernel == k.name], device_name) for k in kernels
    )
    # Every pair, earlier-named first: the first plugin is everyone's baseline,
    # and questions such as grouped vs baseline need pairs beyond it.
    verdicts = tuple(
        judge(summaries[i], summaries[j], seed)
        for i in range(len(summaries))
        for j in range(i + 1, len(summaries))
    )
    return CompareReport(
        problem=problem,
        processes=processes,
        repeats=repeats,
        warmup=warmup,
        seed=seed,
        clock=clock,
        device_name=device_name,
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
        "cache": "cold" if process == 0 else "warm",
        "precheck": result.get("precheck"),
        "postcheck": result.get("postcheck"),
        "graph_ms": result.get("graph_ms"),
        "stop_reason": result.get("stop_reason", ""),
        "warmup_calls": result.get("warmup_calls"),
    }
    for stage in ("precheck", "postcheck"):
        check = result.get(stage)
        if check is not None and not check["passed"]:
            return ProcessRun(**common, status="failed", reason=f"{stage}: {check['reason']}")
    reason = result.get("graph_error", "")
    return ProcessRun(
        **common,
        status="timed",
        samples_ms=tuple(result["samples_ms"]),
        reason=f"graph replay: {reason}" if reason else "",
    )
