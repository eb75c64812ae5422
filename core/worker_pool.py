"""The worker processes of a comparison: the pool of timing sessions (kept
across a sweep's points), the cold-start processes with caches of their own,
the profiling process, and the one rerun a crashed worker gets.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
from gemmreg import isolation
from gemmreg.records import Problem
from gemmreg.registry import RegisteredKernel
from gemmreg.sessions import Session
from gemmreg.timing_records import ColdStart


@attrs.define
class Pool:
    """The timing sessions of a run, one per independent process, started at
    once; a sweep keeps them across points, replacing any that died."""

    size: int
    env: dict[str, str]
    gpu: bool
    sessions: list[Session | None] = attrs.field(factory=list)
    profiler: Session | None = None
    """On a GPU, one more session: the process that takes device profiles."""

    def fresh(self) -> Session:
        return Session(self.env)

    def start(self) -> None:
        self.sessions = [self.fresh() for _ in range(self.size)]
        self.profiler = self.fresh() if self.gpu else None

    def everyone(self) -> list[Session]:
        return [s for s in [*self.sessions, self.profiler] if s is not None]

    def get(self, process: int) -> Session:
        session = self.sessions[process]
        if session is None or session.dead:
            if session is not None:
                session.close()
            session = self.fresh()
            self.sessions[process] = session
        return session

    def close(self) -> None:
        everyone = self.everyone()
        for session in everyone:  # every worker tears down at once
            session.begin_close()
        for session in everyone:
            session.close()
        self.sessions, self.profiler = [], None


def _cold_env(cache_root: Path, name: str) -> dict[str, str]:
    cache = cache_root / f"cold-{name}"
    return {
        **os.environ,
        "TRITON_CACHE_DIR": str(cache / "triton"),
        "GEMMREG_CACHE_DIR": str(cache / "gemmreg"),
    }


def _run_retrying(
    session: Session, task: dict[str, Any], timeout: float, fresh: Callable[[], Session]
) -> tuple[isolation.TaskOutcome, Session, str]:
    """Run ``task``; a worker that crashed (not one that hung) is replaced by a
    fresh one and the task run once more. Returns the outcome, the session
    that ran it last, and a note of the first crash ('' when there was none),
    so a rerun is never silent."""
    outcome = session.run(task, timeout)
    if outcome.status != "crashed":
        return outcome, session, ""
    first = outcome.error.splitlines()[0] if outcome.error else "crashed"
    session.close()
    session = fresh()
    retry = session.run(task, timeout)
    if retry.status == "crashed":
        return retry, session, ""
    return retry, session, f"a first worker crashed ({first}); this is a fresh worker's rerun"


def _cold_starts(
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
        task = {
            "kind": "cold",
            "kernel": kernel.name,
            "problem": attrs.asdict(problem),
            "seed": seed,
        }
        env = _cold_env(cache_root, kernel.name)
        outcome, last, _ = _run_retrying(session, task, timeout, functools.partial(Session, env))
        last.begin_close()  # it tears down while the next kernel's cold start runs
        finished.append(last)
        results.append(_cold_from_outcome(kernel.name, outcome))
        if on_cold is not None:
            on_cold(results[-1])
    for session in finished:  # every cold process gone before any timing starts
        session.close()
    # The timed processes start warm: every cold process's caches, merged.
    for kernel in kernels:
        merge_cache(cache_root / f"cold-{kernel.name}", cache_root / "shared")
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


def _cold_from_outcome(name: str, outcome: isolation.TaskOutcome) -> ColdStart:
    if outcome.status != "ok" or outcome.result is None:
        return ColdStart(kernel=name, status=outcome.status, reason=outcome.error)
    r = outcome.result
    return ColdStart(
        kernel=name,
        status=r.get("status", "ok"),
        prepare_s=r.get("prepare_s"),
        first_call_s=r.get("first_call_s"),
        reason=r.get("reason", ""),
    )


def shared_cache_env(cache_root: Path) -> dict[str, str]:
    shared = cache_root / "shared"
    return {
        **os.environ,
        "TRITON_CACHE_DIR": str(shared / "triton"),
        "GEMMREG_CACHE_DIR": str(shared / "gemmreg"),
    }


def _profile(
    pool: Pool, names: Sequence[str], problem: Problem, seed: int, timeout: float
) -> dict[str, Any]:
    """Device profiles of every kernel, from the pool's profiling process."""
    assert pool.profiler is not None
    task = {
        "kind": "profile",
        "kernels": list(names),
        "problem": attrs.asdict(problem),
        "seed": seed,
    }
    outcome, pool.profiler, _ = _run_retrying(pool.profiler, task, timeout, pool.fresh)
    if outcome.status == "ok" and outcome.result is not None:
        return outcome.result
    first = outcome.error.splitlines()[0] if outcome.error else outcome.status
    return {
        n: {"profile_unavailable": f"profiling process {outcome.status}: {first}"} for n in names
    }
