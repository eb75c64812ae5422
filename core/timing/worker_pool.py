"""The worker processes of a comparison: the pool of timing sessions (kept
across a sweep's points) with its profiling processes, and the workers a
timing command starts ahead of reading its plugins (:class:`Ahead`). The
cold starts, with caches of their own, are :mod:`gemmreg.timing.cold_starts`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
from gemmreg.timing.cold_starts import cold_env, shared_cache_env
from gemmreg.workers import temp_folders
from gemmreg.workers.sessions import Session


@attrs.define
class Pool:
    """The timing sessions of a run, one per independent process, started at
    once; a sweep keeps them across points, replacing any that died."""

    size: int
    env: dict[str, str]
    gpu: bool
    sessions: list[Session | None] = attrs.field(factory=list)
    profilers: list[Session] = attrs.field(factory=list)
    """On a GPU, the processes that take device profiles, one after another
    (:mod:`gemmreg.timing.device_processes`): one from :meth:`start`, as many
    as the command asks from :meth:`fit_profilers`."""
    pin: Callable[[dict[str, str], int], dict[str, str]] | None = None
    """The environment of process ``i``'s worker from :attr:`env` (its GPU:
    ``compare --devices``, :mod:`gemmreg.workers.devices`); None: ``env``.
    The profilers are on process 0's GPU."""

    def fresh(self, process: int = 0) -> Session:
        return Session(self.env if self.pin is None else self.pin(self.env, process))

    def start(self) -> None:
        self.sessions = [self.fresh(i) for i in range(self.size)]
        self.profilers = [self.fresh()] if self.gpu else []

    def everyone(self) -> list[Session]:
        return [*(s for s in self.sessions if s is not None), *self.profilers]

    def get(self, process: int) -> Session:
        session = self.sessions[process]
        if session is None or session.dead:
            if session is not None:
                session.close()
            session = self.fresh(process)
            self.sessions[process] = session
        return session

    def grow(self, size: int) -> None:
        """At least ``size`` sessions: a sequential run's next batch
        (:mod:`gemmreg.timing.sequential`) starts the ones it lacks; those a
        sweep's earlier point started are kept for the next point's batches."""
        self.sessions += [self.fresh(i) for i in range(len(self.sessions), size)]
        self.size = max(self.size, size)

    def fit(self, size: int, gpu: bool) -> None:
        """Resize a pool started on a guess (:class:`Ahead`) to what the
        command turned out to need: extra sessions are killed (never used,
        maybe still starting), missing ones start."""
        for session in self.sessions[size:]:
            if session is not None:
                session.kill()
        self.sessions = self.sessions[:size] + [
            self.fresh(i) for i in range(len(self.sessions), size)
        ]
        self.size = size
        self.fit_profilers(max(1, len(self.profilers)) if gpu else 0)

    def fit_profilers(self, count: int) -> None:
        """Exactly ``count`` profiling sessions: extra ones killed, missing
        ones started (a sweep keeps them across points)."""
        for session in self.profilers[count:]:
            session.kill()
        self.profilers = self.profilers[:count] + [
            self.fresh() for _ in range(len(self.profilers), count)
        ]

    def close(self) -> None:
        everyone = self.everyone()
        for session in everyone:  # every worker tears down at once
            session.begin_close()
        for session in everyone:
            session.close()
        self.sessions, self.profilers = [], []


START_AHEAD_ENV = "GEMMREG_START_AHEAD"
"""``1``: start a timing command's workers before its plugins are read;
``0``: after. Unset: ahead where a GPU device node exists
(:func:`gemmreg.contract.backend.gpu_likely`)."""


def starting_ahead() -> bool:
    from gemmreg.contract import backend

    choice = os.environ.get(START_AHEAD_ENV, "")
    return choice == "1" if choice in ("0", "1") else backend.gpu_likely()


@attrs.define
class Ahead:
    """Workers a timing command starts before its own process has imported
    torch and read the plugins: a worker takes as long to start as that
    (both import torch and discover the plugins), so started after it, as
    they were, they doubled it on the H200 (6 s, then 11 s). Started on the
    command line's word, before it is known to be valid: a command that
    then fails (an unknown name) closes them unused. The cold-start
    sessions have caches of their own under :attr:`cache_root`, the pool
    shares one (:func:`shared_cache_env`)."""

    tmp: tempfile.TemporaryDirectory[str]
    cold: dict[str, Session]
    pool: Pool

    @property
    def cache_root(self) -> Path:
        return Path(self.tmp.name)

    def take_cold(self, name: str) -> Session:
        """The cold-start session started for ``name`` (a fresh one if the
        command line named it differently from the registry)."""
        env = cold_env(self.cache_root, name)
        pinned = env if self.pool.pin is None else self.pool.pin(env, 0)  # process 0's GPU
        return self.cold.pop(name, None) or Session(pinned)

    def close(self) -> None:
        """Every session not taken, and the pool, closed; the caches removed."""
        unused = [*self.cold.values(), *self.pool.everyone()]
        for session in unused:
            session.begin_close()
        for session in unused:
            session.close()
        self._forget()

    def abandon(self) -> None:
        """The command failed before it needed its workers: kill them now
        rather than wait seconds for start-ups nobody will use."""
        for session in [*self.cold.values(), *self.pool.everyone()]:
            session.kill()
        self._forget()

    def _forget(self) -> None:
        self.cold = {}
        self.pool.sessions, self.pool.profilers = [], []
        self.tmp.cleanup()


def start_ahead(
    names: Sequence[str],
    processes: int,
    gpu: bool,
    cold: bool = True,
    pin: Callable[[dict[str, str], int], dict[str, str]] | None = None,
    profilers: int = 1,
) -> Ahead:
    """Start the cold-start sessions of ``names`` (with ``cold``) and a pool
    of ``processes`` timing sessions, plus the profiler when ``gpu``. With
    cold starts the pool shares the caches they fill; without (a sweep), it
    uses the user's own caches. ``pin``: as :attr:`Pool.pin` (``compare
    --devices``, :mod:`gemmreg.fanout.ahead_pinned`), the cold starts on
    process 0's GPU. ``profilers``: the profiling sessions on a GPU
    (``--device-processes``)."""
    tmp = temp_folders.temporary_folder("caches")
    root = Path(tmp.name)
    at_first = (lambda env: env) if pin is None else (lambda env: pin(env, 0))
    sessions = {name: Session(at_first(cold_env(root, name))) for name in names} if cold else {}
    env = shared_cache_env(root) if cold else dict(os.environ)
    pool = Pool(size=processes, env=env, gpu=gpu, pin=pin)
    pool.start()
    if gpu:
        pool.fit_profilers(profilers)
    return Ahead(tmp=tmp, cold=sessions, pool=pool)
