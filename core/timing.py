"""The timing protocol, as run inside one worker process for one kernel.

Order, as in the seed (section 11.3.5): prepare (compile) and the first call
are timed on their own as cold start; a precheck of correctness; warmup; timed
repeats; a postcheck on a freshly poisoned output. A kernel that fails its
precheck is not timed.

On a GPU every sample is one pair of events on the launch stream around one
call, with L2 flushed outside the timed region. On the CPU (torch's CPU ops and
Triton's interpreter, both synchronous) ``time.perf_counter`` brackets the
call, with no flush; the results say which clock was used.
"""

from __future__ import annotations

import time
from typing import Any

import attrs
from gemmreg import backend
from gemmreg.records import KernelSpec, Problem
from gemmreg.verification import GuardedOutput, compare, make_operands, run_and_compare

L2_FLUSH_MULTIPLE = 4
"""The flush buffer is this many times the device's L2, so nothing of A, B or C survives."""
DEFAULT_L2_BYTES = 64 * 2**20
"""Assumed L2 size where the device does not report one."""


def _flush_buffer() -> Any:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2_bytes = getattr(props, "L2_cache_size", 0) or DEFAULT_L2_BYTES
    return torch.empty(L2_FLUSH_MULTIPLE * l2_bytes, dtype=torch.int8, device="cuda")


def _gpu_samples(launch: Any, a: Any, b: Any, out: Any, count: int, flush: bool) -> list[float]:
    import torch

    buffer = _flush_buffer() if flush else None
    stream = torch.cuda.current_stream()
    pairs = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        for _ in range(count)
    ]
    for start, end in pairs:
        if buffer is not None:
            buffer.zero_()  # evicts A, B and C from L2; not inside the events
        start.record(stream)
        launch(a, b, out)
        end.record(stream)
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in pairs]


def _cpu_samples(launch: Any, a: Any, b: Any, out: Any, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        launch(a, b, out)
        samples.append((time.perf_counter() - start) * 1e3)
    return samples


def measure(
    spec: KernelSpec, problem: Problem, seed: int, warmup: int, repeats: int, flush: bool = True
) -> dict[str, Any]:
    """Everything one process learns about one kernel on one problem."""
    info = backend.current()
    device = info.device

    start = time.perf_counter()
    launch = spec.prepare(problem)
    prepare_s = time.perf_counter() - start

    a, b = make_operands(spec, problem, seed, device)
    guarded = GuardedOutput.allocate(problem, device)
    start = time.perf_counter()
    launch(a, b, guarded.out)
    backend.synchronize()
    first_call_s = time.perf_counter() - start

    result: dict[str, Any] = {
        "prepare_s": prepare_s,
        "first_call_s": first_call_s,
        "clock": "cuda-events" if info.is_gpu else "perf_counter",
        "l2_flush": bool(flush and info.is_gpu),
        "warmup": warmup,
        "samples_ms": [],
    }
    precheck = run_and_compare(spec, launch, problem, seed, device)
    result["precheck"] = attrs.asdict(precheck)
    if not precheck.passed:
        return result

    if info.is_gpu:
        _gpu_samples(launch, a, b, guarded.out, warmup, flush=False)
        samples = _gpu_samples(launch, a, b, guarded.out, repeats, flush)
    else:
        _cpu_samples(launch, a, b, guarded.out, warmup)
        samples = _cpu_samples(launch, a, b, guarded.out, repeats)
    result["samples_ms"] = samples

    # The postcheck reads what the timed calls left in C, as the seed does.
    postcheck = compare(a, b, guarded.out, spec.tolerance_for(problem.dtype))
    if postcheck.passed and not guarded.guards_intact():
        postcheck = attrs.evolve(postcheck, passed=False, reason="wrote outside C while timed")
    result["postcheck"] = attrs.asdict(postcheck)
    return result
