"""One worker process's rounds result, read into typed records.

The worker sends plain JSON (it crosses a process boundary); this is the one
place that turns it into :class:`ProcessRun` rows and a :class:`ProcessRecord`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gemmreg import rounds, verdicts
from gemmreg.rounds import Round
from gemmreg.timing_records import ProcessRecord, ProcessRun


def read_process(
    names: Sequence[str], process: int, result: Mapping[str, Any]
) -> tuple[list[ProcessRun], ProcessRecord]:
    taken = [Round.from_dict(r) for r in result.get("rounds", ())]
    graphed = [Round.from_dict(r) for r in result.get("graph_rounds", ())]
    exposure = rounds.exposure(taken, names)
    kernels = result.get("kernels", {})
    runs = []
    for name in names:
        k = kernels.get(name, {})
        common: dict[str, Any] = {
            "kernel": name,
            "process": process,
            "prepare_s": k.get("prepare_s"),
            "first_call_s": k.get("first_call_s"),
            "precheck": k.get("precheck"),
            "postcheck": k.get("postcheck"),
        }
        status = k.get("status", "error")
        if status != "ok":
            reason = k.get("reason", "no result for this kernel")
            runs.append(ProcessRun(**common, status=status, reason=reason))
            continue
        graph_ms = [r.slot_ms[name] for r in graphed if name in r.slot_ms]
        runs.append(
            ProcessRun(
                **common,
                escaped=k.get("sync_escape") or "",
                status="timed",
                round_ms=tuple(k.get("round_ms", ())),
                samples=int(exposure[name]["samples"]),
                exposure_s=exposure[name]["wall_s"],
                graph_ms=sorted(graph_ms)[len(graph_ms) // 2] if graph_ms else None,
                reason=f"graph replay: {k['graph_error']}" if k.get("graph_error") else "",
            )
        )
    timed = [r.kernel for r in runs if r.status == "timed"]
    soak = result.get("soak", {})
    record = ProcessRecord(
        process=process,
        status="ok",
        stop_reason=result.get("stop_reason", ""),
        rounds=len(taken),
        dropped=tuple(r.dropped for r in taken if r.dropped),
        soak_s=soak.get("s"),
        soak_steady=soak.get("steady"),
        monitor=result.get("monitor", ""),
        clock_trace=_clock_trace(taken),
        log_ratios=verdicts.process_log_ratios(
            timed, {"end-to-end": taken, "graph replay": graphed}
        ),
        placements=max((k.get("placements", 1) for k in kernels.values()), default=None),
    )
    return runs, record


def _clock_trace(taken: Sequence[Round]) -> dict[str, Any]:
    """Summary of the clock readings of the rounds (none on the CPU)."""
    raw = [reading for r in taken for reading in r.readings]
    if not raw:
        return {}
    from gemmreg import gpu_monitor

    return gpu_monitor.trace_summary([gpu_monitor.Reading.from_dict(x) for x in raw])
