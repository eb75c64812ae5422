"""``gemmreg compare``: cold starts apart, then paired rounds in independent
processes, then verdicts (:mod:`gemmreg.timing.verdicts`).

1. **Cold start**: each kernel's prepare and first call in its own fresh
   process with empty compile caches (Triton's, and ``GEMMREG_CACHE_DIR``
   where plugins keep tuning choices), so the one-time cost a user pays does
   not depend on which kernel a process happened to run first. A kernel
   that fails, crashes or hangs here is not timed; when fewer kernels than
   the command needs remain (``need``: two for ``compare``, whose answer is
   a pair's verdict), nothing is timed at all.
2. **Rounds**: ``processes`` independent worker processes, each timing
   every kernel in the same rounds (:mod:`gemmreg.timing.timing`), with the caches
   the cold starts filled (warm start).

Every worker is started at once and waits for its turn
(:mod:`gemmreg.workers.sessions`); only one runs at a time on a GPU. Spread
over several GPUs (``compare --devices``), the processes run one per GPU at
a time, the GPUs side by side (:mod:`gemmreg.timing.process_lanes`); the
cold starts still run alone, one after another, before any of them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.timing import cold_starts, compare_parts, process_lanes, rounds, sequential, stats
from gemmreg.timing import device_processes as device_processes_module
from gemmreg.timing.cold_starts import SHARED_CACHE, cold_env, merge_cache, shared_cache_env
from gemmreg.timing.device_processes import Profiles
from gemmreg.timing.summaries import tile_efficiency
from gemmreg.timing.timing_options import DEFAULT_DEVICE_PROCESSES, DEFAULT_L2, policy_for
from gemmreg.timing.timing_records import (
    ColdStart,
    CompareReport,
    KernelSummary,
    ProcessRecord,
    ProcessRun,
    Verdict,
)
from gemmreg.timing.worker_pool import Ahead, Pool
from gemmreg.workers import temp_folders, timeouts
from gemmreg.workers.sessions import Session
from gemmreg.workers.tracing import trace

__all__ = [
    "CompareReport",
    "KernelSummary",
    "ProcessRun",
    "Verdict",
    "run_compare",
    "tile_efficiency",
]


def run_compare(
    kernels: Sequence[RegisteredKernel],
    problem: Problem,
    *,
    processes: int,
    seed: int,
    clock: str,
    device_name: str,
    gpu: bool,
    repeats: int | None = None,
    warmup: int | None = None,
    max_time_s: float | None = None,
    margin: float = stats.DEFAULT_MARGIN,
    confidence: float = stats.CONFIDENCE,
    l2: str = DEFAULT_L2,
    device_processes: int = DEFAULT_DEVICE_PROCESSES,
    on_run: Callable[[ProcessRun], None] | None = None,
    task_timeout: float | None = None,
    pool: Pool | None = None,
    cold: bool = True,
    while_starting: Callable[[], None] | None = None,
    need: int = 1,
    on_cold: Callable[[ColdStart], None] | None = None,
    ahead: Ahead | None = None,
    device_index: int | None = None,
    pin: Callable[[dict[str, str], int], dict[str, str]] | None = None,
    keep_cache: Path | None = None,
    gpus: Sequence[int] = (),
    budget_s: float | None = None,
    on_batch: Callable[[int, int, int], None] | None = None,
    family: int = 1,
) -> CompareReport:
    """Time ``kernels`` on ``problem``; verdicts for every pair, in the order named.

    :param pool: timing sessions to reuse (a sweep); by default a pool is
        started here and closed at the end.
    :param cold: measure cold starts in fresh processes first (a sweep skips them).
    :param need: kernels that must survive their cold starts for any timing
        to run; the others are then reported ``skipped``, with the reason.
    :param on_cold: called with each cold start as it ends (progress).
    :param task_timeout: seconds one worker task may take; by default scaled
        to the problem (:mod:`gemmreg.workers.timeouts`) and to the kernels a task holds.
    :param while_starting: called once, while the workers start (the caller's
        own set-up, such as the manifest, overlaps theirs).
    :param ahead: workers the caller started before it read the plugins
        (:func:`gemmreg.timing.worker_pool.start_ahead`); run here, closed here.
    :param device_index: the GPU the pool is pinned to, recorded in the report.
    :param pin: the environment of process ``i`` (its GPU) from a shared one,
        for the pool started here and the cold starts (process 0's GPU).
    :param device_processes: profiling processes on a GPU, one after another
        (:mod:`gemmreg.timing.device_processes`); from 3 the device-kernel
        regime is judged across them.
    :param keep_cache: where to copy the caches the timed processes shared
        (compiled kernels, plugins' tuning choices) before they are removed: a
        profiler run after the timing then launches the configs that were timed.
    :param gpus: the GPUs ``pin`` spreads the processes over (process ``i`` on
        ``gpus[i % len(gpus)]``): one process per GPU at a time, the GPUs side
        by side (:mod:`gemmreg.timing.process_lanes`); each process's record
        names its GPU.
    :param budget_s: seconds of timed processes the comparison may spend
        adding batches after the first ``processes`` until every pair is
        decided (:mod:`gemmreg.timing.sequential`); None: ``processes`` only.
    :param on_batch: called before each batch after the first with the look
        that left a pair undecided, the processes added and the kernels each times.
    :param family: the points judged together with this one (a sweep's, ``bench
        --sweep-wide``): its pairs at ``confidence`` Bonferroni-corrected over
        them, and the sequential looks aimed at that level.
    """
    per_kernel = task_timeout or timeouts.task_timeout_s(problem, gpu)
    cap = rounds.HARD_CAP_FACTOR * (max_time_s or policy_for(gpu).stop.max_time_s)
    asked = compare_parts.Asked(
        problem=problem,
        processes=processes,
        seed=seed,
        clock=clock,
        device_name=device_name,
        gpu=gpu,
        repeats=repeats,
        warmup=warmup,
        max_time_s=max_time_s,
        margin=margin,
        confidence=confidence,
        l2=l2,
        budget_s=budget_s,
        family=family,
    )
    looks: list[int] = []
    look_s: list[float] = []  # the seconds the processes had taken at each look
    records: list[ProcessRecord] = []
    profiles: Profiles = {}
    colds: list[ColdStart] = []
    runs, runnable = compare_parts.split_runnable(kernels, problem)

    partial = False
    with contextlib.ExitStack() as stack:
        own_pool = pool is None
        if ahead is not None:
            stack.callback(ahead.close)
            cache_root = ahead.cache_root
            cold_sessions = [ahead.take_cold(k.name) for k in runnable] if cold else []
            pool = ahead.pool
            pool.fit(processes, gpu)
        else:
            cache_root = Path(stack.enter_context(temp_folders.temporary_folder("caches")))
            cold_sessions = (
                [Session(_pinned(pin, cold_env(cache_root, k.name))) for k in runnable]
                if cold
                else []
            )
        if pool is None:
            pool = Pool(size=processes, env=shared_cache_env(cache_root), gpu=gpu, pin=pin)
            pool.start()  # their start-up overlaps the cold sessions'
        pool.fit_profilers(device_processes if gpu else 0)
        if ahead is not None:
            for session in ahead.cold.values():  # started for kernels that are not timed
                session.begin_close()
        try:
            if while_starting is not None:
                while_starting()
            # Every worker finishes starting before any runs a task: start-up
            # (CUPTI's set-up above all) never overlaps another worker's GPU work.
            for session in [*cold_sessions, *pool.everyone()]:
                session.wait_ready()
            trace("every worker ready")
            if cold and runnable:
                colds = cold_starts.run(
                    runnable, cold_sessions, problem, seed, cache_root, per_kernel, on_cold
                )
                failed = {c.kernel: c.status for c in colds if c.status != "ok"}
                runnable = [k for k in runnable if k.name not in failed]
                if failed and len(runnable) < need:
                    runs += compare_parts.not_timed(runnable, failed, need, on_run)
                    runnable = []
            names = [k.name for k in runnable]
            state = process_lanes.Processes(
                pool=pool,
                task=asked.rounds_task,
                limit=lambda held: task_timeout or len(held) * per_kernel + cap,
                from_outcome=compare_parts.from_outcome,
                on_run=on_run,
                gpus=gpus,
                names=names,
                everyone=list(names),
            )
            try:
                started = time.monotonic()
                process_lanes.time_processes(state, processes if runnable else 0)
                if budget_s is not None and runnable:
                    looks.append(processes)
                    look_s.append(time.monotonic() - started)
                    _further_looks(
                        state, pool, asked, (kernels, colds), (looks, look_s), started, on_batch
                    )
            finally:  # what finished is kept, in process order, if Ctrl-C came
                timed_runs, timed_records = process_lanes.collected(state)
                runs += timed_runs
                records += timed_records
            names = state.names
            if pool.profilers and runnable and not partial:
                profiles = device_processes_module.profile(
                    pool, names, problem, seed, len(names) * per_kernel
                )
        except KeyboardInterrupt:
            partial = True  # keep what finished; the report says it is partial
        finally:
            for session in cold_sessions:
                session.close()
            if own_pool:
                pool.close()
            if keep_cache is not None and cold:
                merge_cache(cache_root / SHARED_CACHE, keep_cache / SHARED_CACHE)

    return compare_parts.build_report(
        asked, kernels, runs, records, colds, profiles, partial, device_index, looks, look_s
    )


def _further_looks(
    state: process_lanes.Processes,
    pool: Pool,
    asked: compare_parts.Asked,
    timed: tuple[Sequence[RegisteredKernel], Sequence[ColdStart]],
    taken: tuple[list[int], list[float]],
    started: float,
    on_batch: Callable[[int, int, int], None] | None,
) -> None:
    """A sequential run's batches after its first (:mod:`gemmreg.timing.sequential`):
    while some pair is undecided at the last look and another batch is
    expected to finish within the budget, start its workers (all at once,
    their start-ups overlapping), wait until every one is ready, run them,
    and look again. ``taken`` gets each look's process count, and the seconds
    since ``started``, as it is taken.
    The batch runs the same tasks as the first, through the same lanes."""
    assert asked.budget_s is not None
    kernels, colds = timed
    looks, look_s = taken
    while not state.hung and state.names:
        runs, records = process_lanes.collected(state)
        if not compare_parts.still_undecided(asked, kernels, runs, records, colds, looks):
            return
        done = looks[-1]
        batch = sequential.next_batch(done, time.monotonic() - started, asked.budget_s)
        if batch == 0:
            return
        pool.grow(done + batch)
        for session in pool.sessions[done : done + batch]:
            if session is not None:
                session.wait_ready()
        trace(f"look {len(looks)} undecided: {batch} more processes")
        if on_batch is not None:
            on_batch(len(looks), batch, len(state.names))
        process_lanes.time_processes(state, done + batch, first=done)
        looks.append(done + batch)
        look_s.append(time.monotonic() - started)


def _pinned(
    pin: Callable[[dict[str, str], int], dict[str, str]] | None, env: dict[str, str]
) -> dict[str, str]:
    return env if pin is None else pin(env, 0)
