"""One kernel's figures over every timing process: the summary a table row
and a verdict are drawn from, with the reasons its figures cannot be trusted
(work that escaped its timed interval, a rate above the datasheet peak, and
the end-to-end vetoes of :mod:`gemmreg.timing.vetoes`).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from gemmreg.contract.inputs import generator_name
from gemmreg.contract.known_limits import triton_interpreted
from gemmreg.contract.records import Problem
from gemmreg.discovery.availability import unsupported_reason
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.instruments.work_accounting import process_findings
from gemmreg.timing import regime_device, regimes, vetoes
from gemmreg.timing.peaks import peak_tflops
from gemmreg.timing.timing_records import ColdStart, KernelSummary, ProcessRun


def tile_efficiency(problem: Problem, tile: tuple[int, int, int] | None) -> float | None:
    """Useful work over the work of the padded tiles: seed 003's tail waste."""
    if tile is None:
        return None
    padded = 1
    for size, block in zip((problem.m, problem.n, problem.k), tile, strict=True):
        padded *= -(-size // block) * block
    return problem.m * problem.n * problem.k / padded


INTERRUPTED = "interrupted"
"""The status of a kernel whose point was cut short before any of its
processes finished. Runs saved before it existed call it ``error`` with no
reason; they read as they were saved."""
INTERRUPTED_REASON = "the point was interrupted before any of its processes finished"


def _median_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _regime_figures(
    runs: Sequence[ProcessRun], center_ms: float
) -> tuple[dict[str, float], dict[str, Any]]:
    """Each regime measured in the timing processes: its figure over them
    (``regime_ms``), and the fields of the summary it sets (its labels)."""
    figures: dict[str, float] = {}
    fields: dict[str, Any] = {}
    for regime in regimes.timed():
        measured = [r.regime_ms[regime.name] for r in runs if regime.name in r.regime_ms]
        figure = regime.summary_figure(measured)
        if figure is not None:
            figures[regime.name] = figure
        fields.update(regime.summary_fields(center_ms, figure))
    return figures, fields


def _profiled_fields(profile: Mapping[str, Any] | None) -> dict[str, Any]:
    """The fields of the summary the regimes measured in processes of their
    own set from the kernel's profile record (the device kernels' figures)."""
    return {k: v for r in regimes.profiled() for k, v in r.profile_fields(profile).items()}


def summarize(
    kernel: RegisteredKernel,
    problem: Problem,
    runs: Sequence[ProcessRun],
    cold: ColdStart | None,
    device_name: str,
    profile: Mapping[str, Any] | None = None,
    partial: bool = False,
) -> KernelSummary:
    """One kernel's figures over every process. ``profile`` is its device
    profile (CUPTI) from the profiling process, when there was one.
    ``partial``: the point was cut short (Ctrl-C, a termination signal), and
    a kernel with no finished process is :data:`INTERRUPTED`, not an error."""
    spec = kernel.spec
    precision = spec.capabilities.precision.get(problem.dtype)
    math_mode = precision.math if precision is not None else "?"
    tolerance = spec.tolerances.get(problem.dtype)
    base: dict[str, Any] = {
        "kernel": spec.name,
        "package": kernel.origin.package,
        "precision": str(precision) if precision is not None else "?",
        "math": math_mode,
        "generator": generator_name(spec),
        "execution": "interpreted" if triton_interpreted(spec.capabilities.triton) else "native",
        "asked": kernel.unavailable is None and unsupported_reason(spec, problem) is None,
        "vendor_library": spec.vendor_library,
        "tile_efficiency": tile_efficiency(problem, spec.capabilities.tile),
        "cold_prepare_s": cold.prepare_s if cold else None,
        "cold_first_call_s": cold.first_call_s if cold else None,
        "rtol": tolerance.rtol if tolerance else None,
        "atol": tolerance.atol if tolerance else None,
        "tolerance_why": tolerance.why if tolerance else "",
    }
    bad = [run for run in runs if run.status != "timed"]
    if cold is not None and cold.status != "ok" and not runs:
        return KernelSummary(**base, status=cold.status, reason=f"cold start: {cold.reason}")
    if not runs and partial:
        return KernelSummary(**base, status=INTERRUPTED, reason=INTERRUPTED_REASON)
    if not runs or bad:
        if bad and all(r.status == "skipped" for r in bad):
            return KernelSummary(**base, status="skipped", reason=bad[0].reason)
        reason = "; ".join(f"process {r.process}: {r.status}: {r.reason}" for r in bad)
        return KernelSummary(**base, status=bad[0].status if bad else "error", reason=reason)
    medians = tuple(run.median_ms for run in runs if run.median_ms is not None)
    if not medians:
        return KernelSummary(**base, status="error", reason="every round was dropped")
    blind = [r.process for r in runs if r.median_ms is not None and r.median_ms <= 0]
    if blind:  # events around a call that launched nothing: no speed can come of it
        return KernelSummary(
            **base,
            status="failed",
            reason=f"NO TIME: process {blind[0]}'s median is 0 ms (the clock saw no work)",
        )
    center = statistics.median(medians)
    tflops = problem.flops / (center * 1e-3) / 1e12
    peak = peak_tflops(device_name, math_mode)
    figures, labels = _regime_figures(runs, center)
    invalid = [
        f"process {r.process}: work escaped its timed interval: {r.escaped}"
        for r in runs
        if r.escaped
    ]
    if min(medians) <= 0:  # a clock that saw nothing: no speed can be claimed from it
        invalid.append(f"NO TIME: a process median of {min(medians):g} ms (the clock saw no work)")
    # the profiles are evidence on the kernel too, whatever regimes are registered:
    # work that escaped a profiled call, and the work accounting's launch patterns
    device = (profile or {}).get("profile") or {}
    by_process = regime_device.process_profiles(profile)
    if by_process:
        invalid += [
            f"device profile, process {i + 1}: {p['escaped']}"
            for i, p in enumerate(by_process)
            if p.get("escaped")
        ]
    elif device.get("escaped"):
        invalid.append(f"device profile: {device['escaped']}")
    accounted, accounting_flags = process_findings(
        [(r.process, r.accounting) for r in runs], by_process or [device]
    )
    invalid += accounted
    if peak is not None and tflops > peak:
        invalid.append(f"ABOVE PEAK: {tflops:.4g} TFLOP/s > datasheet {peak:g} for {math_mode}")
    flags = []
    if profile and profile.get("profile_unavailable"):
        flags.append(f"no device profile: {profile['profile_unavailable']}")
    flags += accounting_flags
    errors = [check["max_error"] for r in runs for check in (r.precheck, r.postcheck) if check]
    summary = KernelSummary(
        **base,
        status="timed",
        process_medians_ms=medians,
        center_ms=center,
        low_ms=min(medians),
        high_ms=max(medians),
        tflops=tflops,
        peak_tflops=peak,
        percent_of_peak=100 * tflops / peak if peak else None,
        regime_ms=figures,
        host_ms=_median_or_none([r.host_ms for r in runs]),
        variants=tuple(dict.fromkeys(r.variant for r in runs if r.variant)),
        warm_prepare_s=_median_or_none([r.prepare_s for r in runs]),
        warm_first_call_s=_median_or_none([r.first_call_s for r in runs]),
        samples=sum(r.samples for r in runs),
        exposure_s=sum(r.exposure_s for r in runs),
        max_error=max(errors) if errors else None,
        invalid=tuple(invalid),
        flags=tuple(flags),
        **labels,
        **_profiled_fields(profile),
    )
    found = vetoes.kernel_vetoes(summary, problem, device_name, profile)
    return attrs.evolve(summary, invalid=(*summary.invalid, *found)) if found else summary
