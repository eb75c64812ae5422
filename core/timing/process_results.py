"""One worker process's rounds result, as the records of a comparison.

The worker's :class:`~gemmreg.workers.task_results.RoundsResult` arrives typed
(:mod:`gemmreg.workers.task_wire`); this turns it into :class:`ProcessRun` rows and a
:class:`ProcessRecord`: the exposure and log-ratios of the rounds, and each
kernel's figures.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TypedDict, Unpack

from gemmreg.instruments.work_accounting import WorkAccounting
from gemmreg.timing import regimes, rounds, verdicts
from gemmreg.timing.rounds import Round
from gemmreg.timing.timing_records import ProcessRecord, ProcessRun
from gemmreg.workers.task_results import KernelTiming, RoundsResult


def read_process(
    names: Sequence[str], process: int, result: RoundsResult
) -> tuple[list[ProcessRun], ProcessRecord]:
    taken = list(result.rounds)
    beside = {r.name: result.regime_rounds.get(r.name, ()) for r in regimes.timed()}
    exposure = rounds.exposure(taken, names)
    runs = []
    for name in names:
        k = result.kernels.get(name)
        if k is None:
            runs.append(_run(name, process, KernelTiming(), "error", "no result for this kernel"))
            continue
        if k.status != "ok":
            runs.append(_run(name, process, k, k.status, k.reason))
            continue
        figures = {r.name: r.process_figure(name, beside[r.name]) for r in regimes.timed()}
        runs.append(
            _run(
                name,
                process,
                k,
                "timed",
                "; ".join(f"{regime}: {error}" for regime, error in k.regime_errors.items()),
                escaped=k.sync_escape or "",
                accounting=k.accounting,
                round_ms=k.round_ms,
                samples=int(exposure[name]["samples"]),
                exposure_s=exposure[name]["wall_s"],
                regime_ms={r: figure for r, figure in figures.items() if figure is not None},
                host_ms=_host_ms(name, taken),
            )
        )
    timed = [r.kernel for r in runs if r.status == "timed"]
    soak = result.soak
    record = ProcessRecord(
        process=process,
        status="ok",
        stop_reason=result.stop_reason,
        rounds=len(taken),
        dropped=tuple(r.dropped for r in taken if r.dropped),
        soak_s=soak.s if soak is not None else None,
        soak_steady=soak.steady if soak is not None else None,
        monitor=result.monitor,
        queued=result.queued,
        retakes=result.retakes,
        accounting=result.accounting,
        clock_trace=_clock_trace(taken),
        log_ratios=verdicts.process_log_ratios(timed, {regimes.PRIMARY: taken, **beside}),
        placements=max((k.placements for k in result.kernels.values()), default=None),
    )
    return runs, record


def _host_ms(name: str, taken: Sequence[Round]) -> float | None:
    """The host's time per call over the kept rounds (their median), or None."""
    values = [r.slot_host_ms[name] for r in rounds.kept(taken) if name in r.slot_host_ms]
    return statistics.median(values) if values else None


class TimedFigures(TypedDict, total=False):
    """What a timed kernel's run adds to its record (fields of :class:`ProcessRun`)."""

    escaped: str
    accounting: WorkAccounting | None
    round_ms: tuple[float, ...]
    samples: int
    exposure_s: float
    regime_ms: dict[str, float]
    host_ms: float | None


def _run(
    name: str,
    process: int,
    k: KernelTiming,
    status: str,
    reason: str,
    **figures: Unpack[TimedFigures],
) -> ProcessRun:
    """The run of one kernel: its first call and checks as the process saw them."""
    return ProcessRun(
        kernel=name,
        process=process,
        status=status,
        reason=reason,
        prepare_s=k.prepare_s,
        first_call_s=k.first_call_s,
        variant=k.variant,
        precheck=k.precheck.recorded() if k.precheck is not None else None,
        postcheck=k.postcheck.recorded() if k.postcheck is not None else None,
        **figures,
    )


def _clock_trace(taken: Sequence[Round]) -> dict[str, object]:
    """Summary of the clock readings of the rounds (none on the CPU)."""
    raw = [reading for r in taken for reading in r.readings]
    if not raw:
        return {}
    from gemmreg.instruments import gpu_monitor

    return gpu_monitor.trace_summary([gpu_monitor.Reading.from_dict(x) for x in raw])
