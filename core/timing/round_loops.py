"""The measuring loops of one timing process: heat soak, rounds of equal
slots (the primary regime; the others measure after them,
:mod:`gemmreg.timing.regimes`). :mod:`gemmreg.timing.timing` prepares the kernels
and calls these; each kernel here is anything with a ``name`` and a
``call()`` that enqueues one call (so tests can hand in stand-ins).

A kernel may also have ``pin()``, which pins torch's switches as that kernel
runs (TF32 on for one that declares TF32 math, :func:`gemmreg.discovery.torch_state.pin_for`)
and returns the reading. Kernels are interleaved, so each one's pin is applied
before its calls (a slot, a soak batch, another regime's calls: :func:`enter`), never
inside a timed interval, and torch's state is checked against it after them.

And ``use_placement(index)`` and ``fresh_values(seed, index)``: before each
round, the placement it is about to use, with new values in its A and B
(:mod:`gemmreg.timing.fresh_values`); and ``poison()``, which refills C with
the sentinel before every sample, soak included (so the soak's cost per
sample, which sizes the slots, holds the poison's write too).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import attrs
from gemmreg.discovery import state_changes
from gemmreg.discovery.torch_state import TorchState
from gemmreg.timing import rounds
from gemmreg.timing.clocks import Call
from gemmreg.timing.rounds import Round
from gemmreg.timing.timing_options import Policy
from gemmreg.workers.task_results import KernelTiming

if TYPE_CHECKING:
    from gemmreg.instruments.gpu_monitor import Monitor
    from gemmreg.instruments.gpu_trace import Reading

SOAK_WINDOW_S = 0.5
"""Heat soak ends once the SM clock's level held over this many seconds
(gemmreg.instruments.gpu_trace). On the H200's recorded heat-up under full bf16 load
(tests/fixtures/nvml/recorded/bf16_8192_heatup.json) the clock falls from
1980 to about 1515 MHz within 0.2 s and then drifts a few percent over many
seconds, which no window of a second catches: a 0.5 s window ends the soak
at 0.57 s at 1515 MHz, a 1 s window at 1.05 s at 1507 MHz. Every process of
a comparison soaks, so the shorter window saves half a second each."""
SLOT_BATCHES = 4
"""A slot's samples are queued in about this many batches, each read after one
synchronisation: few enough to keep the GPU busy, enough to end the slot on time."""
FALLBACK_CALL_MS = 1.0
"""Per-call time assumed when every round was dropped (sizing a graph, or the
calls of the sync check)."""


class RoundKernel(Protocol):
    """What the loops need of a kernel (:class:`gemmreg.timing.timed_kernel.TimedKernel`,
    or a test's stand-in): the optional ``pin``, ``poison``, ``use_placement``
    and ``fresh_values`` of the module's docstring are looked up, not required."""

    name: str
    result: KernelTiming
    """Its record: the loops read its rounds; a regime notes why it could not measure it."""

    def call(self) -> None:
        """Enqueue one call."""


class Clock(Protocol):
    """What the loops need of a clock (:mod:`gemmreg.timing.clocks`)."""

    last_host_ms: float | None
    """The host's time per call in the last batch, where the clock keeps one."""

    def samples(self, call: Call, count: int, before: Call | None = None) -> list[float]:
        """``count`` timed samples of ``call`` in ms, ``before`` untimed ahead of each."""


class SoakFigures(TypedDict):
    """What the heat soak found (the fields of :class:`gemmreg.workers.task_results.Soak`)."""

    s: float
    calls: dict[str, int]
    steady: bool
    sample_cost_s: dict[str, float]
    readings: Any
    """The last readings (``attrs.asdict`` of each); untyped: ``Soak.readings``
    converts with ``tuple``, which the attrs mypy plugin cannot match to a list."""


class ChangedInRounds(Exception):
    """A kernel's calls in the soak or the rounds changed torch's global state:
    the others may have run under it since, so the process's rounds are void."""

    def __init__(self, kernel: str, changed: Exception):
        self.kernel, self.changed = kernel, changed


def enter(kernel: RoundKernel) -> TorchState | None:
    """Before ``kernel``'s calls (here, or another regime's), outside any timed
    interval: its own pin (about 0.2 ms of host work, between two synchronised
    slots); the reading to check against after them, or None for a stand-in
    without ``pin``."""
    pin = getattr(kernel, "pin", None)
    return pin() if pin is not None else None


def _check_state(name: str, expected: TorchState | None) -> None:
    """After ``name``'s calls: torch's global state as pinned, or ChangedInRounds
    blaming ``name`` (nothing to check when ``expected`` is None)."""
    if expected is None:
        return
    try:
        state_changes.raise_on_changes(expected)
    except state_changes.StateChanged as error:
        raise ChangedInRounds(name, error) from None


def _samples(clock: Clock, kernel: RoundKernel, count: int) -> list[float]:
    """``count`` timed samples of ``kernel``; C poisoned before each one, outside
    its interval, where the kernel can be (``poison``; stand-ins need not)."""
    poison = getattr(kernel, "poison", None)
    if poison is None:
        return list(clock.samples(kernel.call, count))
    return list(clock.samples(kernel.call, count, before=poison))


def heat_soak(
    kernels: Sequence[RoundKernel], clock: Clock, policy: Policy, monitor: Monitor | None
) -> SoakFigures:
    """Untimed round-robin until the clock holds; returns the per-sample cost.
    Each kernel's pin is applied before its calls and checked after, as in the rounds."""
    cost: dict[str, list[float]] = {k.name: [] for k in kernels}
    readings: list[Reading] = []
    calls = {k.name: 0 for k in kernels}
    start = time.perf_counter()
    steady = monitor is None
    while True:
        for kernel in kernels:
            count = max(1, policy.soak_min_calls // 4)
            expected = enter(kernel)
            t0 = time.perf_counter()
            _samples(clock, kernel, count)
            cost[kernel.name].append((time.perf_counter() - t0) / count)
            calls[kernel.name] += count
            _check_state(kernel.name, expected)
        if monitor is not None:
            from gemmreg.instruments import gpu_monitor

            readings.append(monitor.read())
            steady = gpu_monitor.clock_steady(readings, window_s=SOAK_WINDOW_S)
        elapsed = time.perf_counter() - start
        done = elapsed >= policy.soak_min_s and min(calls.values()) >= policy.soak_min_calls
        if (done and steady) or elapsed >= policy.soak_max_s:
            break
    return {
        "s": time.perf_counter() - start,
        "calls": calls,
        "steady": steady,
        "sample_cost_s": {name: statistics.median(c[-3:]) for name, c in cost.items()},
        "readings": [attrs.asdict(r) for r in readings[-5:]],
    }


def _slot(
    kernel: RoundKernel, clock: Clock, budget_s: float, cost_s: float
) -> tuple[list[float], float, float | None]:
    """One slot: samples until the slot has run for the budget, give or take
    half a sample, so every kernel of a round is exposed for the same time;
    with the host's time per call (the median over its batches, where the
    clock keeps one)."""
    batch = max(1, round(budget_s / max(cost_s, 1e-9) / SLOT_BATCHES))
    values: list[float] = []
    host: list[float] = []
    start = time.perf_counter()
    while True:
        values += _samples(clock, kernel, batch)
        host_ms = getattr(clock, "last_host_ms", None)  # stand-ins may keep none
        if host_ms is not None:
            host.append(host_ms)
        elapsed = time.perf_counter() - start
        per_sample = elapsed / len(values)
        remaining = budget_s - elapsed
        if remaining <= per_sample / 2:
            return values, elapsed, statistics.median(host) if host else None
        batch = max(1, min(batch, round(remaining / per_sample)))


def take_rounds(
    kernels: Sequence[RoundKernel],
    clock: Clock,
    policy: Policy,
    cost_s: Mapping[str, float],
    seed: int,
    monitor: Monitor | None,
) -> tuple[list[Round], str]:
    """Rounds until the stopping rule says so. Each slot starts from its kernel's
    pin and torch's state is checked after it (never inside one)."""
    names = [k.name for k in kernels]
    by_name = {k.name: k for k in kernels}
    budget = max(policy.slot_s, *cost_s.values())
    taken: list[Round] = []
    start = time.perf_counter()
    index = 0
    while True:
        order = rounds.round_orders(names, index + 1, seed)[index]
        for kernel in kernels:  # operands rotate through their placements, with new values
            if hasattr(kernel, "use_placement"):
                kernel.use_placement(index)
            if hasattr(kernel, "fresh_values"):
                kernel.fresh_values(seed, index)
        readings = [monitor.read()] if monitor is not None else []
        recorder = getattr(
            clock, "marks", None
        )  # work accounting's (gemmreg.timing.work_recording)
        if recorder is not None:
            recorder.round_begins(index)
        slot_ms, wall, samples, host = {}, {}, {}, {}
        for name in order:
            expected = enter(by_name[name])
            values, wall[name], host_ms = _slot(by_name[name], clock, budget, cost_s[name])
            slot_ms[name], samples[name] = statistics.median(values), len(values)
            if host_ms is not None:
                host[name] = host_ms
            _check_state(name, expected)
        if recorder is not None:
            recorder.round_ends()
        if monitor is not None:
            readings.append(monitor.read())
        dropped = None
        if monitor is not None:
            from gemmreg.instruments import gpu_monitor

            dropped = gpu_monitor.round_drop_reason(readings)
        taken.append(
            Round(
                order=tuple(order),
                slot_ms=slot_ms,
                slot_wall_s=wall,
                samples=samples,
                slot_host_ms=host,
                readings=tuple(attrs.asdict(r) for r in readings),
                dropped=dropped,
            )
        )
        index += 1
        reason = rounds.stop_reason(taken, names, policy.stop, time.perf_counter() - start)
        if reason:
            return taken, reason


def per_call_ms(kernel: RoundKernel) -> float:
    """A kernel's typical call, from its rounds (a guess when all were dropped)."""
    return float(statistics.median(kernel.result.round_ms or [FALLBACK_CALL_MS]))
