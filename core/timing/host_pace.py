"""Whether a verdict would read the other way in an eager loop, where the
host's launch path, not the GPU, paces the calls.

Why: every timed sample is queued in full behind a held stream
(:mod:`gemmreg.instruments.stream_hold`), so a verdict judges the GPU's
time, as a CUDA graph or a host running far ahead would see it; the host's
own time per call is kept apart (``KernelSummary.host_ms``). At a
microsecond-scale GEMM that launch path can take several times the GPU's
time: a Triton kernel's launch path of 45-66 us against 8-31 us on an
H200 at Llama 3 8B's 1-token points, cuBLAS's 25-53 us, in
``evidence/2026-12-04-h200-llm-fp16-fp8-tf32/fp16-1-16``. Called back to
back without a graph, each call then costs about the larger of the two, and
a kernel FASTER on the GPU can be the slower one in the user's loop. The
verdict stays the GPU's (the protocol's intervals rest on the GPU's figures;
the host's per-call medians carry none); this names the reversal, with the
estimate it rests on, wherever the host paces either call.
"""

from __future__ import annotations

from gemmreg.contract.numbers import ratio, significant
from gemmreg.timing.timing_records import KernelSummary, Verdict

DECIDED = ("faster", "slower")
"""Only a decided direction can be reversed."""


def host_paced_speedup(kernel: KernelSummary, baseline: KernelSummary) -> float | None:
    """The baseline's cost a call over the kernel's, back to back without a
    graph (each call the larger of its GPU time and its host launch path,
    whichever the next call waits on), where the host paces either call;
    None where neither is host-paced, or a figure is missing (a CPU run, a
    run saved before host time was kept)."""
    k_gpu, k_host = kernel.center_ms, kernel.host_ms
    b_gpu, b_host = baseline.center_ms, baseline.host_ms
    if k_gpu is None or k_host is None or b_gpu is None or b_host is None:
        return None
    if k_host <= k_gpu and b_host <= b_gpu:
        return None
    return max(b_gpu, b_host) / max(k_gpu, k_host)


def host_pace_note(v: Verdict, kernel: KernelSummary | None, baseline: KernelSummary | None) -> str:
    """``HOST-PACED: ...`` where a FASTER or SLOWER verdict would read the
    other way in an eager loop; '' elsewhere."""
    if v.verdict not in DECIDED or kernel is None or baseline is None:
        return ""
    eager = host_paced_speedup(kernel, baseline)
    # a tie (equal launch paths pacing both) reads neither way: at 1 the SLOWER
    # verdict got the note and its mirror FASTER did not
    if eager is None or eager == 1 or (eager < 1) == (v.verdict == "slower"):
        return ""
    assert kernel.host_ms is not None and baseline.host_ms is not None
    return (
        f"HOST-PACED: back to back without a CUDA graph, {ratio(eager, digits=3)}x: the host's "
        f"launch path takes {significant(kernel.host_ms * 1e3, 3)} us a call for "
        f"{v.kernel}, {significant(baseline.host_ms * 1e3, 3)} us for {v.baseline} (the "
        "verdict is the GPU's time)"
    )


def legend_lines() -> list[str]:
    """The rule, as the legends under the tables state it."""
    return [
        "HOST-PACED (notes): a FASTER or SLOWER verdict that reads the other way when each call",
        "costs the larger of its GPU time and its host ms, as back to back without a CUDA graph.",
    ]
