"""Device profiles (CUPTI) from several profiling processes, one after another
(``--device-processes``), so that the device-kernel regime can be judged
across processes like the timed regimes (:mod:`gemmreg.timing.regime_device`).

Why several: one process's device-kernel ratio moved more between processes
than its own rounds said. Split-K against cuBLAS at 128x128x32768 bf16 on the
H200 read 0.990x in one process whose 40 paired rounds spanned 0.986-0.993,
and 1.016x, 1.014x, 1.001x and 0.999x in four others
(``evidence/2026-12-02-h200-device-figure-spread/device-figures.txt``): a process's own
operands and placement, not its rounds, set most of the figure.

The processes run in turn, never side by side (two on one GPU would share it),
each with its own operands, and each takes the kernels in a rotated order, so
no kernel is always the first of a round. The record keeps the first process's
profile where runs saved before this kept their only one (``"profile"``), and
every process's beside it (``"process_profiles"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gemmreg.contract.records import Problem
from gemmreg.timing.regime_device import PROCESS_PROFILES
from gemmreg.workers import isolation
from gemmreg.workers.task_results import ProfileResult
from gemmreg.workers.tasks import ProfileTask

if TYPE_CHECKING:
    from gemmreg.timing.worker_pool import Pool

Profiles = dict[str, dict[str, object]]
"""Per kernel, its device-profile record (``ProfileResult.recorded``'s layout:
``{"profile": {...}}`` or ``{"profile_unavailable": why}``, and, merged from
several processes, :data:`PROCESS_PROFILES`), as ``CompareReport.profiles`` keeps it."""


def rotated(names: Sequence[str], process: int) -> list[str]:
    """``names`` started at ``process`` (mod their number): process ``i``'s order."""
    if not names:
        return []
    k = process % len(names)
    return [*names[k:], *names[:k]]


def task(names: Sequence[str], problem: Problem, seed: int, process: int) -> ProfileTask:
    """Profiling process ``process``'s task: the kernels in its rotated order."""
    return ProfileTask(kernels=rotated(names, process), problem=problem, seed=seed)


def profile(
    pool: Pool, names: Sequence[str], problem: Problem, seed: int, timeout: float
) -> Profiles:
    """Every kernel's device profiles, from each of the pool's profiling
    sessions in turn (a crashed one replaced and retried once, as a timed
    process is), merged by :func:`merged`."""
    from gemmreg.workers.sessions import run_retrying

    found = []
    for i, session in enumerate(list(pool.profilers)):
        outcome, pool.profilers[i], _ = run_retrying(
            session, task(names, problem, seed, i), timeout, pool.fresh
        )
        found.append(profiles_from(outcome, names))
    return merged(found, names)


def profiles_from(outcome: isolation.TaskOutcome, names: Sequence[str]) -> Profiles:
    """Each kernel's device profile from a profiling task's outcome, or why none."""
    if outcome.status == "ok" and isinstance(outcome.result, ProfileResult):
        return outcome.result.recorded()
    first = outcome.error.splitlines()[0] if outcome.error else outcome.status
    return {
        n: {"profile_unavailable": f"profiling process {outcome.status}: {first}"} for n in names
    }


def merged(per_process: Sequence[Profiles], names: Sequence[str]) -> Profiles:
    """One record per kernel from each process's (``ProfileResult.recorded``
    layout): a single process's as it is; from several, the first process
    that profiled the kernel gives ``"profile"`` (or the first's reason for
    none), and :data:`PROCESS_PROFILES` lists every process's entry."""
    if len(per_process) == 1:
        return dict(per_process[0])
    out: Profiles = {}
    for name in names:
        entries = [p.get(name, {"profile_unavailable": "not profiled"}) for p in per_process]
        first = next((e for e in entries if e.get("profile")), entries[0])
        out[name] = {**first, PROCESS_PROFILES: entries}
    return out
