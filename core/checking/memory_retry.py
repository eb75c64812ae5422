"""A case that ran out of memory is tried once more, after its kernel's other
cases, in a fresh worker, before it counts as an error.

Why: on an H200 in December 2026 five ``check --full`` runs shared one card and
the checker's float64 reference for 65600x64x32768 could not get its 16 GiB;
the case read as the kernel's ERROR though the kernel was never judged (the
same plugin code had passed it the run before). Memory taken by other
processes on the device, or still held by the worker's earlier cases, says
nothing about the kernel. So the case waits until the kernel's batch is done
(its worker gone, its memory freed) and runs again in a fresh worker, with
only the batch's other such cases after it. A second out-of-memory is reported as
such, naming both possible holders, and the case stays unjudged (an error:
``check`` exits 1, since not everything passed). Any other error is the
kernel's and is never retried: a retry must not hide a flaky kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
from gemmreg.workers import isolation
from gemmreg.workers.tasks import Task, TaskOutcome

OUT_OF_MEMORY = ("OutOfMemoryError: ", "MemoryError: ")
"""How a worker reports running out of memory: torch's (CUDA's or HIP's
allocator) and Python's own (the host's), as ``TypeName: message``."""


def out_of_memory(outcome: TaskOutcome) -> bool:
    """Whether a task ended in an out-of-memory error (not a crash or a hang)."""
    return outcome.status == "error" and outcome.error.startswith(OUT_OF_MEMORY)


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def again_reason(second: TaskOutcome) -> str:
    """The error of a case out of memory twice: what was asked for, and that the
    kernel was not judged."""
    return (
        f"out of memory twice, the second time alone in a fresh worker after the kernel's "
        f"other cases: {first_line(second.error)} (memory held by other processes on the "
        "device, or this case's own allocations: the case was not judged)"
    )


def retried_note(first: TaskOutcome) -> str:
    """What a result judged on the second try carries: that there was a first."""
    return (
        "judged on a second try, in a fresh worker after the kernel's other cases, "
        f"after out of memory: {first_line(first.error)}"
    )


Settle = Callable[[int, TaskOutcome, str], None]
"""Called with a task's index in its batch, its final outcome, and a note to
keep beside its result ("" for none)."""


@attrs.define
class ShortOfMemory:
    """The tasks of one batch that ran out of memory, held back for a second
    try after the batch (:meth:`keep` as each task ends, then :meth:`try_again`,
    or :meth:`settle_as_first` when the batch was interrupted)."""

    firsts: dict[int, TaskOutcome] = attrs.Factory(dict)
    hung: bool = False
    """A task of the batch timed out: a hang costs one timeout, so nothing of
    that kernel runs again, and the held tasks keep their first outcomes."""

    def keep(self, index: int, outcome: TaskOutcome) -> bool:
        """Hold ``outcome`` back when it is out of memory (True: not settled yet)."""
        self.hung = self.hung or outcome.status == "timeout"
        if out_of_memory(outcome):
            self.firsts[index] = outcome
            return True
        return False

    def settle_as_first(self, settle: Settle) -> None:
        for index, first in self.firsts.items():
            settle(index, first, "")

    def try_again(
        self,
        tasks: Sequence[Task],
        settle: Settle,
        task_timeout: Sequence[float],
        env: dict[str, str] | None = None,
        skip_after_lost_workers: int = 0,
    ) -> None:
        """Run each held task of the batch ``tasks`` (limits: ``task_timeout``,
        per task of the batch) once more, in order, in a fresh worker;
        ``settle`` gets each one's final outcome: the second try's, with
        :func:`retried_note`, or an out-of-memory one rewritten by
        :func:`again_reason` (no note: the reason says it). A task the second
        run never reached (interrupted) settles with its first outcome, so no
        case goes unrecorded."""
        if self.hung:
            self.settle_as_first(settle)
            return
        held = list(self.firsts)
        settled: set[int] = set()

        def second(position: int, outcome: TaskOutcome) -> None:
            index = held[position]
            settled.add(index)
            if out_of_memory(outcome):
                settle(index, attrs.evolve(outcome, error=again_reason(outcome)), "")
            else:
                settle(index, outcome, retried_note(self.firsts[index]))

        try:
            isolation.run_tasks(
                [tasks[i] for i in held],
                task_timeout=[task_timeout[i] for i in held],
                on_outcome=second,
                env=env,
                skip_after_timeout=True,
                skip_after_lost_workers=skip_after_lost_workers,
            )
        finally:
            for index in held:
                if index not in settled:
                    settle(index, self.firsts[index], "")
