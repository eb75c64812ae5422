"""The cold starts of a comparison: each kernel's prepare and first call in
a fresh worker with compile caches of its own, so that the figure is what a
first run pays; then those caches merged into the one the timed processes
share (:data:`SHARED_CACHE`), so that the timed processes start warm and
none of them pays a compile inside its rounds.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.timing.timing_records import ColdStart
from gemmreg.workers import isolation
from gemmreg.workers.sessions import Session, run_retrying
from gemmreg.workers.task_results import KernelTiming
from gemmreg.workers.tasks import ColdTask

SHARED_CACHE = "shared"
"""The folder, under a timing command's cache root, of the caches its timed
processes share (the cold starts' caches are merged into it)."""


def cold_env(cache_root: Path, name: str) -> dict[str, str]:
    """The environment of ``name``'s cold-start process: caches of its own
    under ``cache_root``, so no other kernel's compiles warm it."""
    cache = cache_root / f"cold-{name}"
    return {
        **os.environ,
        "TRITON_CACHE_DIR": str(cache / "triton"),
        "GEMMREG_CACHE_DIR": str(cache / "gemmreg"),
    }


def shared_cache_env(cache_root: Path) -> dict[str, str]:
    """The environment of a process using the caches under ``cache_root``'s
    :data:`SHARED_CACHE`: Triton's compile cache and ``GEMMREG_CACHE_DIR``."""
    shared = cache_root / SHARED_CACHE
    return {
        **os.environ,
        "TRITON_CACHE_DIR": str(shared / "triton"),
        "GEMMREG_CACHE_DIR": str(shared / "gemmreg"),
    }


def run(
    kernels: Sequence[RegisteredKernel],
    sessions: Sequence[Session],
    problem: Problem,
    seed: int,
    cache_root: Path,
    timeout: float,
    on_cold: Callable[[ColdStart], None] | None = None,
) -> list[ColdStart]:
    """Each kernel in its own fresh process, with caches of its own. A crash
    gets one rerun in a fresh process; a hang does not (one timeout each)."""
    results = []
    finished = []
    for kernel, session in zip(kernels, sessions, strict=True):
        task = ColdTask(kernel=kernel.name, problem=problem, seed=seed)
        env = cold_env(cache_root, kernel.name)
        outcome, last, _ = run_retrying(session, task, timeout, functools.partial(Session, env))
        last.begin_close()  # it tears down while the next kernel's cold start runs
        finished.append(last)
        results.append(_from_outcome(kernel.name, outcome))
        if on_cold is not None:
            on_cold(results[-1])
    for session in finished:  # every cold process gone before any timing starts
        session.close()
    # The timed processes start warm: every cold process's caches, merged.
    for kernel in kernels:
        merge_cache(cache_root / f"cold-{kernel.name}", cache_root / SHARED_CACHE)
    return results


def merge_cache(source: Path, target: Path) -> None:
    """Copy into ``target`` the files of ``source`` it lacks, each by an atomic
    rename, never writing into a file that exists. The waiting workers have
    already loaded shared libraries from ``target`` (Triton's driver helpers):
    overwriting one in place changes the pages they have mapped, and on the
    H200 that killed them with SIGSEGV at their next call. Compile caches are
    keyed by content, so a file that exists already holds the same thing."""
    if not source.is_dir():
        return
    for path in source.rglob("*"):
        if not path.is_file():
            continue
        destination = target / path.relative_to(source)
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        partial = destination.with_name(f".{destination.name}.{os.getpid()}.partial")
        shutil.copy2(path, partial)
        os.replace(partial, destination)


def _from_outcome(name: str, outcome: isolation.TaskOutcome) -> ColdStart:
    r = outcome.result
    if outcome.status != "ok" or not isinstance(r, KernelTiming):
        return ColdStart(kernel=name, status=outcome.status, reason=outcome.error)
    return ColdStart(
        kernel=name,
        status=r.status,
        prepare_s=r.prepare_s,
        first_call_s=r.first_call_s,
        reason=r.reason,
    )
