"""The timing protocol, as run inside one worker process for every kernel of
a comparison at once.

1. Each kernel is prepared, called once and prechecked (a kernel that fails
   is not timed; the others are). Cold start is measured elsewhere, in a
   fresh process per kernel (:func:`cold_start`), so it does not depend on
   which kernel a process happened to run first.
2. Heat soak: untimed round-robin slots until the SM clock holds steady
   (through NVML, :mod:`gemmreg.instruments.gpu_monitor`) and the minimums are met. It
   also measures what one sample costs each kernel, which sizes the slots.
3. Rounds (:mod:`gemmreg.timing.rounds`): every kernel gets one slot of the same
   wall-clock budget per round, in a rotating Latin-square order; clocks,
   power, temperature, throttle reasons and NVML's violation counters are
   read at the start and end of every round (a read takes about 2 ms, too
   long to take between slots), and a round in which the GPU was throttled
   is dropped for every kernel.
   Rounds stop when every pair's paired log-ratio is narrow enough, or at a cap.
   Before each round the placement a kernel is about to use gets new values
   in A and B (:mod:`gemmreg.timing.fresh_values`), and before every sample
   its C is poisoned (the sentinel NaN), outside the timed interval.
4. A postcheck of what the last timed call left in each used placement's C,
   against the values that placement held then: a call that skipped its
   work leaves the poison, a result kept from other values is stale.
5. On a GPU: the regimes measured beside the primary one, each in rounds
   too (:mod:`gemmreg.timing.regimes`: warm, launch-free CUDA-graph
   replays); then, per kernel, a whole-device integrity check by device-wide
   synchronisation: all the work a call causes must fall inside its timed
   interval. Device activity through CUPTI (device-kernel time, launches,
   and the precise integrity check) is taken in a process of its own
   (:func:`device_profiles`). The device work of every timed call is
   recorded in every timed process (:mod:`gemmreg.timing.work_recording`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs
from gemmreg.contract import backend
from gemmreg.contract.records import KernelSpec, Problem
from gemmreg.discovery import state_changes, torch_state
from gemmreg.timing import regimes, round_loops, rounds, work_recording
from gemmreg.timing.clocks import CpuClock, GpuClock
from gemmreg.timing.device_memory import device_bytes
from gemmreg.timing.placements import more_placements, placement_count
from gemmreg.timing.timed_kernel import TimedKernel, prepare
from gemmreg.timing.timing_options import CPU_POLICY as CPU_POLICY  # re-exported: decided there
from gemmreg.timing.timing_options import DEFAULT_L2
from gemmreg.timing.timing_options import GPU_POLICY as GPU_POLICY
from gemmreg.timing.timing_options import Policy as Policy
from gemmreg.timing.timing_options import policy_for as policy_for
from gemmreg.workers.task_results import KernelTiming, RoundsResult, Soak

if TYPE_CHECKING:
    from gemmreg.instruments.gpu_monitor import Monitor

PREPARING = "preparing and prechecking "
"""The note a timing process sends before each kernel's prepare: a process
that hangs there is that kernel's doing (gemmreg.timing.comparing reads it)."""


def cold_start(spec: KernelSpec, problem: Problem, seed: int) -> KernelTiming:
    """Prepare and the first call, in a fresh process with empty caches."""
    kernel = TimedKernel(name=spec.name, spec=spec)
    prepare(kernel, problem, seed, backend.current().device)
    return kernel.result


def _open_monitor() -> tuple[Monitor | None, str]:
    if not backend.current().is_gpu:
        return None, "no GPU"
    from gemmreg.instruments import gpu_monitor

    return gpu_monitor.open_monitor(0)


def measure_regimes(
    ready: Sequence[TimedKernel],
    policy: Policy,
    order_seed: int,
    problem: Problem,
    result: RoundsResult,
    note: Callable[[str], None],
) -> None:
    """Each regime measured in the timing process: its rounds of the ``ready`` kernels, after the
    primary rounds and their postcheck, into ``result`` by regime name."""
    for regime in regimes.timed():
        note(regime.measuring)
        measured = regime.measure(ready, policy, order_seed, problem)
        result.regime_rounds[regime.name] = tuple(measured)


def measure_group(
    specs: Mapping[str, KernelSpec],
    problem: Problem,
    seed: int,
    order_seed: int,
    policy: Policy,
    l2: str | None = DEFAULT_L2,
    note: Callable[[str], None] = lambda text: None,
) -> RoundsResult:
    """Everything one process learns about every kernel of a comparison.

    :param l2: what the flush before each sample leaves in L2
        (:data:`gemmreg.timing.timing_options.L2_STATES`), None for no flush; a GPU only.
    :param note: told what is about to run, so that a crash that takes the
        process down can be blamed on the right kernel.
    """
    info = backend.current()
    clock: GpuClock | CpuClock = GpuClock(l2) if info.is_gpu else CpuClock()
    result = RoundsResult(
        clock=clock.name, l2=l2 if info.is_gpu else None, policy=attrs.asdict(policy)
    )
    ready: list[TimedKernel] = []
    for name in rounds.round_orders(list(specs), 1, order_seed)[0]:
        kernel = TimedKernel(name=name, spec=specs[name])
        result.kernels[name] = kernel.result
        note(f"{PREPARING}{name}")
        try:
            if prepare(kernel, problem, seed, info.device):
                ready.append(kernel)
        except state_changes.StateChanged as error:  # blamed on this kernel, undone for the others
            kernel.result.status, kernel.result.reason = "failed", str(error)
            torch_state.pin()
        except Exception as error:  # this kernel's failure; the others go on
            kernel.result.status = "error"
            kernel.result.reason = f"{type(error).__name__}: {error}"
    if not ready:
        return result
    count = placement_count(problem, device_bytes(info)[0] if info.is_gpu else None)
    for kernel in ready:  # the first placement is the prechecked one
        try:
            assert kernel.inputs is not None  # taken at the precheck
            extra = more_placements(kernel.inputs, problem, info.device, count - 1)
        except Exception:  # no room for copies: time in the one placement (placements: 1)
            extra = []
        kernel.place(extra)
    monitor, result.monitor = _open_monitor()
    # every kernel prepared and called first: CUPTI is set up only now (work_recording)
    recorder = work_recording.begin(clock, info.is_gpu)
    note(f"timing {', '.join(k.name for k in ready)} in rounds")
    try:
        soak = round_loops.heat_soak(ready, clock, policy, monitor)
        result.soak = Soak(**soak)
        taken, result.stop_reason = round_loops.take_rounds(
            ready, clock, policy, soak["sample_cost_s"], order_seed, monitor
        )
        note("checked calls on fresh operands, and the timed calls' device work")
        result.accounting = work_recording.finish(recorder, ready, problem, seed, info.device)
    except round_loops.ChangedInRounds as error:
        # The others ran under the changed state: none of this process's rounds count.
        for kernel in ready:
            why = (
                str(error.changed)
                if kernel.name == error.kernel
                else (f"rounds abandoned: {error.kernel}'s launch changed global state")
            )
            kernel.result.status = "failed" if kernel.name == error.kernel else "error"
            kernel.result.reason = why
        torch_state.pin()
        if monitor is not None:
            monitor.close()
        return result
    finally:  # read after the rounds: a hold that gave up during them says so here
        result.queued = clock.queued
        result.retakes = tuple(clock.retakes)
        work_recording.abandon(recorder)
    result.rounds = tuple(taken)
    for kernel in ready:
        kernel.result.round_ms = tuple(r.slot_ms[kernel.name] for r in rounds.kept(taken))
        # The postcheck reads what the timed calls left in C, as the seed does.
        kernel.result.postcheck = check = kernel.verify_every_placement(problem)
        kernel.result.placements = len(kernel.used)
        if check is not None and not check.passed:
            kernel.result.status, kernel.result.reason = "failed", f"postcheck: {check.reason}"
    if info.is_gpu:
        measure_regimes(ready, policy, order_seed, problem, result, note)
        from gemmreg.timing import device_activity

        for kernel in ready:
            note(f"checking that {kernel.name}'s device work stays in its interval")
            calls = device_activity.calls_for_budget(
                round_loops.per_call_ms(kernel) / 1e3,
                device_activity.SYNC_BUDGET_S,
                device_activity.SYNC_LEAST_CALLS,
                device_activity.SYNC_CHECK_CALLS,
            )
            kernel.pin()
            kernel.result.sync_escape = device_activity.sync_escape(kernel.call, calls)
    if monitor is not None:
        monitor.close()
    return result
