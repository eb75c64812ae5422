"""The timed processes of a comparison: one after another or, spread over
several GPUs, one per GPU at a time, the GPUs side by side.

Process ``i`` runs on lane ``i % lanes``; lane ``j`` is the ``j``-th GPU of
``compare --devices`` (the pool's sessions are pinned by
:func:`gemmreg.workers.devices.spread`). Each lane is a thread that runs its
processes in order, so a timing worker owns its GPU while it runs: two timing
processes never share one. With one lane (one GPU, or none) it is a plain
loop in the calling thread, as it always was.

The processes stay the independent unit of the verdicts: each is the same
task, with its own order seed, whichever lane ran it, and the results are
handed back in process order whatever order they finished in.

What one process learns applies to the processes that start after it: a
kernel that hung in its prepare is left out of them, and a hang that cannot
be pinned on one kernel ends the timing (the processes not yet started are
skipped). With lanes, a process already running on another GPU finishes.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence

import attrs
from gemmreg.timing.timing import PREPARING
from gemmreg.timing.timing_records import ProcessRecord, ProcessRun
from gemmreg.timing.worker_pool import Pool
from gemmreg.workers import devices, isolation
from gemmreg.workers.sessions import Session, run_retrying
from gemmreg.workers.tasks import RoundsTask

LEFTOVER_WAIT_S = 5.0
"""After Ctrl-C, how long each lane may take to notice that its worker was
killed before the comparison goes on without it."""

Outcome = tuple[list[ProcessRun], ProcessRecord]
"""One process's rows, and its record."""
FromOutcome = Callable[[Sequence[str], int, isolation.TaskOutcome], Outcome]


class _Stopped(Exception):
    """Ctrl-C reached the calling thread: a lane starts nothing more."""


@attrs.define
class Processes:
    """The state the processes of one comparison share (under :attr:`lock`)."""

    pool: Pool
    task: Callable[[int, list[str]], RoundsTask]
    """Process ``i``'s task for the kernels still timed."""
    limit: Callable[[list[str]], float]
    """Seconds a task of those kernels may take."""
    from_outcome: FromOutcome
    on_run: Callable[[ProcessRun], None] | None
    gpus: Sequence[int]
    """The GPUs' indices, lane by lane; empty: one lane, the one device there is."""
    names: list[str]
    """The kernels still timed: those the first process starts with, less
    any that hung in its prepare since."""
    everyone: list[str] = attrs.field(factory=list)
    """The kernels the first process started with."""
    hung: str = ""
    done: dict[int, Outcome] = attrs.field(factory=dict)
    lock: threading.Lock = attrs.field(factory=threading.Lock)
    stop: threading.Event = attrs.field(factory=threading.Event)

    def run(self, process: int) -> None:
        """Time process ``process`` (or skip it, after a hang), on its lane's GPU."""
        with self.lock:
            names, hung = list(self.names), self.hung
        if hung or not names:
            skipped = [
                ProcessRun(kernel=n, process=process, status="skipped", reason=hung)
                for n in names or self.everyone
            ]
            self._finish(process, (skipped, ProcessRecord(process=process, status="skipped")))
            return
        fresh = functools.partial(self._fresh, process)
        task = self.task(process, names)
        outcome, session, rerun = run_retrying(
            self.pool.get(process), task, self.limit(names), fresh
        )
        self.pool.sessions[process] = session
        if self.stop.is_set():
            raise _Stopped  # killed under it: not a result
        new_runs, record = self.from_outcome(names, process, outcome)
        if outcome.status == "timeout":
            self._after_timeout(names, session.last_note, outcome.error)
        if rerun:
            record = attrs.evolve(record, reason=rerun)
        if self.gpus:
            record = attrs.evolve(record, device_index=self.gpus[process % len(self.gpus)])
        self._finish(process, (new_runs, record))

    def _fresh(self, process: int) -> Session:
        if self.stop.is_set():
            raise _Stopped
        return self.pool.fresh(process)

    def _after_timeout(self, names: list[str], note: str, error: str) -> None:
        """One timeout, not one per process: a kernel that hung in its prepare
        is left out of the later processes; a hang anywhere else cannot be
        pinned on one kernel and ends the timing."""
        culprit = note.removeprefix(PREPARING)
        with self.lock:
            if note.startswith(PREPARING) and culprit in names:
                self.names = [n for n in self.names if n != culprit]
            elif not self.hung:
                self.hung = f"an earlier process timed out ({error.splitlines()[0]})"

    def _finish(self, process: int, outcome: Outcome) -> None:
        with self.lock:
            self.done[process] = outcome
            if outcome[1].status == "skipped":
                return  # skipped processes have no record, as they never had
            for run in outcome[0]:
                if self.on_run is not None:
                    self.on_run(run)

    def lane(self, processes: Sequence[int], errors: list[BaseException]) -> None:
        try:
            for process in processes:
                if self.stop.is_set():
                    return
                self.run(process)
        except _Stopped:
            return
        except BaseException as error:  # re-raised in the calling thread
            errors.append(error)
            self.stop.set()


def time_processes(state: Processes, processes: int, first: int = 0) -> None:
    """Run processes ``first .. processes-1`` (a sequential run's next batch
    starts past the last), their results into ``state.done``
    (:func:`collected` hands them back in process order). Ctrl-C is
    re-raised once the lanes have stopped; what finished before it is kept."""
    lanes = max(1, len(state.gpus))
    if lanes == 1 or processes - first <= 1:
        for process in range(first, processes):
            state.run(process)
        return
    errors: list[BaseException] = []
    threads = [  # a lane's processes are one GPU's: equal modulo the lanes
        threading.Thread(
            target=state.lane,
            args=(range(first + lane, processes, lanes), errors),
            name=f"gemmreg-lane{lane}",
            daemon=True,
        )
        for lane in range(min(lanes, processes - first))
    ]
    try:
        devices.run_threads(threads)
    except KeyboardInterrupt:
        state.stop.set()
        for session in state.pool.sessions:
            if session is not None:
                session.kill()
        for thread in threads:
            thread.join(LEFTOVER_WAIT_S)
        raise
    if errors:
        raise errors[0]


def collected(state: Processes) -> tuple[list[ProcessRun], list[ProcessRecord]]:
    """The rows and records of the processes that finished, in process order."""
    with state.lock:
        finished = sorted(state.done.items())
    runs = [run for _, (rows, _) in finished for run in rows]
    records = [record for _, (_, record) in finished if record.status != "skipped"]
    return runs, records
