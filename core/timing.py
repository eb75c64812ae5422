"""The timing protocol, as run inside one worker process for one kernel.

Order, as in the seed (section 11.3.5), tightened:

1. prepare (compile) and the first call are timed on their own: cold start;
2. a precheck of correctness: a kernel that fails it is not timed;
3. warmup: at least ``WARMUP_MIN_CALLS`` calls and ``WARMUP_MIN_MS`` of work;
4. timed samples until the estimate is steady (``steady``) or a cap is hit;
5. a postcheck of what the timed calls left in C;
6. on a GPU, a secondary, warm and launch-free figure from CUDA-graph replay.

On a GPU every sample is one pair of events on the launch stream around one
call, with L2 flushed (a buffer of ``L2_FLUSH_MULTIPLE`` x L2) before each pair,
outside it. On the CPU (torch's CPU ops and Triton's interpreter, both
synchronous) ``time.perf_counter`` brackets the call, with no flush; results
say which clock was used.
"""

from __future__ import annotations

import time
from typing import Any

import attrs
from gemmreg import backend, stats
from gemmreg.records import KernelSpec, Problem
from gemmreg.verification import GuardedOutput, make_operands, verify

L2_FLUSH_MULTIPLE = 4
"""The flush buffer is this many times the device's L2, so nothing of A, B or C survives."""
DEFAULT_L2_BYTES = 64 * 2**20
"""Assumed L2 size where the device does not report one."""


@attrs.frozen(kw_only=True)
class Policy:
    """When to stop warming up and when to stop sampling. Every threshold is here."""

    warmup_min_calls: int
    warmup_min_ms: float
    warmup_max_s: float
    min_samples: int
    min_time_s: float
    max_samples: int
    max_time_s: float
    target_rel_sem: float = 0.001
    """Stop once the standard error of the mean is below 0.1% of the mean..."""
    target_rel_spread: float = 0.005
    """...or the interquartile range is below 0.5% of the median."""
    batch: int = 10
    """Samples taken between two looks at the stopping rule."""


GPU_POLICY = Policy(
    warmup_min_calls=10,
    warmup_min_ms=25.0,
    warmup_max_s=2.0,
    min_samples=20,
    min_time_s=0.05,
    max_samples=2000,
    max_time_s=3.0,
)
CPU_POLICY = Policy(
    # Triton's interpreter takes ~0.25 s per 128^3 call: a short, honest run.
    warmup_min_calls=2,
    warmup_min_ms=0.0,
    warmup_max_s=5.0,
    min_samples=10,
    min_time_s=0.0,
    max_samples=200,
    max_time_s=3.0,
    batch=5,
)
GRAPH_CALLS = 20
"""Calls captured in one CUDA graph for the launch-free figure."""
GRAPH_REPLAYS = 10


def policy_for(
    gpu: bool,
    repeats: int | None = None,
    warmup: int | None = None,
    max_time_s: float | None = None,
) -> Policy:
    """The backend's policy; ``repeats`` fixes the sample count, ``warmup`` the
    warmup calls, ``max_time_s`` caps the sampling time (sweeps use a short cap)."""
    policy = GPU_POLICY if gpu else CPU_POLICY
    if max_time_s is not None:
        policy = attrs.evolve(
            policy, max_time_s=max_time_s, warmup_max_s=min(policy.warmup_max_s, max_time_s)
        )
    if repeats is not None:
        policy = attrs.evolve(
            policy,
            min_samples=repeats,
            max_samples=repeats,
            min_time_s=0.0,
            max_time_s=float("inf"),
        )
    if warmup is not None:
        policy = attrs.evolve(policy, warmup_min_calls=warmup, warmup_min_ms=0.0)
    return policy


def _flush_buffer() -> Any:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2_bytes = getattr(props, "L2_cache_size", 0) or DEFAULT_L2_BYTES
    return torch.empty(L2_FLUSH_MULTIPLE * l2_bytes, dtype=torch.int8, device="cuda")


class _GpuClock:
    def __init__(self, flush: bool):
        import torch

        self.torch = torch
        self.buffer = _flush_buffer() if flush else None

    def samples(self, call: Any, count: int) -> list[float]:
        torch = self.torch
        stream = torch.cuda.current_stream()
        pairs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(count)
        ]
        for start, end in pairs:
            if self.buffer is not None:
                self.buffer.zero_()  # evicts A, B and C from L2; outside the events
            start.record(stream)
            call()
            end.record(stream)
        torch.cuda.synchronize()
        return [start.elapsed_time(end) for start, end in pairs]


class _CpuClock:
    def samples(self, call: Any, count: int) -> list[float]:
        out = []
        for _ in range(count):
            start = time.perf_counter()
            call()
            out.append((time.perf_counter() - start) * 1e3)
        return out


def warm_up(call: Any, clock: Any, policy: Policy) -> tuple[int, float]:
    """Run until both minimums are met (or the cap); returns (calls, ms of work)."""
    calls, work_ms, start = 0, 0.0, time.perf_counter()
    while calls < policy.warmup_min_calls or work_ms < policy.warmup_min_ms:
        work_ms += sum(clock.samples(call, 1))
        calls += 1
        if time.perf_counter() - start > policy.warmup_max_s:
            break
    return calls, work_ms


def sample_until_steady(call: Any, clock: Any, policy: Policy) -> tuple[list[float], str]:
    """Sample in batches until the stopping rule holds; returns (samples, why it stopped)."""
    samples: list[float] = []
    start = time.perf_counter()
    while True:
        room = policy.max_samples - len(samples)
        samples += clock.samples(call, min(policy.batch, room))
        elapsed = time.perf_counter() - start
        if len(samples) >= policy.max_samples:
            return samples, f"sample cap ({policy.max_samples})"
        if elapsed >= policy.max_time_s:
            return samples, f"time cap ({policy.max_time_s:g} s)"
        if len(samples) < policy.min_samples or elapsed < policy.min_time_s:
            continue
        sem = stats.relative_sem(samples)
        if sem < policy.target_rel_sem:
            return samples, f"steady: sem {sem:.2%} of mean"
        spread = stats.relative_spread(samples)
        if spread < policy.target_rel_spread:
            return samples, f"steady: IQR {spread:.2%} of median"


def graph_replay_ms(call: Any) -> float:
    """Median per-call time of CUDA-graph replays: warm (no flush), launch-free."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(GRAPH_CALLS):
            call()
    graph.replay()
    times = []
    for _ in range(GRAPH_REPLAYS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / GRAPH_CALLS)
    return stats.median(times)


def measure(
    spec: KernelSpec,
    problem: Problem,
    seed: int,
    repeats: int | None = None,
    warmup: int | None = None,
    flush: bool = True,
    max_time_s: float | None = None,
) -> dict[str, Any]:
    """Everything one process learns about one kernel on one problem."""
    info = backend.current()
    device = info.device
    policy = policy_for(info.is_gpu, repeats, warmup, max_time_s)

    a, b = make_operands(spec, problem, seed, device)
    before = (a.clone(), b.clone())
    guarded = GuardedOutput.allocate(problem, device)
    start = time.perf_counter()
    launch = spec.prepare(problem)
    prepare_s = time.perf_counter() - start
    start = time.perf_counter()
    launch(a, b, guarded.out)
    backend.synchronize()
    first_call_s = time.perf_counter() - start

    result: dict[str, Any] = {
        "prepare_s": prepare_s,
        "first_call_s": first_call_s,
        "clock": "cuda-events" if info.is_gpu else "perf_counter",
        "l2_flush": bool(flush and info.is_gpu),
        "policy": attrs.asdict(policy),
        "samples_ms": [],
    }
    # The precheck reads what the first call wrote into the poisoned, guarded C:
    # the same operands are then timed, with no second draw of inputs.
    precheck = verify(spec, problem, before, (a, b), guarded)
    result["precheck"] = attrs.asdict(precheck)
    if not precheck.passed:
        return result

    def call() -> None:
        launch(a, b, guarded.out)

    clock = _GpuClock(flush) if info.is_gpu else _CpuClock()
    result["warmup_calls"], result["warmup_ms"] = warm_up(call, clock, policy)
    result["samples_ms"], result["stop_reason"] = sample_until_steady(call, clock, policy)

    # The postcheck reads what the timed calls left in C, as the seed does.
    postcheck = verify(spec, problem, before, (a, b), guarded)
    result["postcheck"] = attrs.asdict(postcheck)

    if info.is_gpu:
        try:
            result["graph_ms"] = graph_replay_ms(call)
        except Exception as error:  # some launchers cannot be captured; say so
            result["graph_error"] = f"{type(error).__name__}: {error}"
    return result
