"""The recorder of one timed process's calls, for its work accounting
(:mod:`gemmreg.timing.work_recording` says why and when).

Each timed call is bracketed by two launches of gemmreg's marker kernel and
logged with its owner, so the trace can be cut into calls; the recording
runs through CUPTI directly (:mod:`gemmreg.instruments.cupti_recorder`), switched
on for one drawn round in every :data:`SAMPLE_BLOCK`, or else through
torch's profiler for every call (:mod:`gemmreg.instruments.kineto_trace`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from gemmreg.instruments import cupti_recorder
from gemmreg.instruments.activity_analysis import Activity
from gemmreg.instruments.kineto_trace import profiler_activities

if TYPE_CHECKING:
    from gemmreg.contract.gpu_compile import CompiledKernel
    from gemmreg.timing.clocks import GpuClock
    from torch.profiler import profile

SAMPLE_BLOCK = 8
"""Through CUPTI, one round in every block of this many is recorded, drawn
from the operating system's random source as the block starts: a process of
10 to 300 rounds records 1 to 38 of them (the first block's round lies within
the first 8, and a process takes at least 10). On the H200, reading every call of
a process (6000 calls, 39000 device activities) took 3-4 s of a 7-9 s
process at 512^3; an eighth of them keeps that under half a second. Which
rounds count cannot be seen (switching CUPTI changes nothing a plugin reads
through torch) nor foretold (the draw is not seeded from anything in the
process). A recorded round's figures stay in the verdict: its calls ran
under CUPTI's kernel records (0.3-1.5% of a single-launch call's figure on
the H200, ``evidence/2026-12-03-h200-cupti-cost/``), every kernel of the
round alike."""


def _owner(call: Callable[[], None]) -> str:
    """The kernel a call belongs to: the ``name`` of the object it is bound to."""
    return str(getattr(getattr(call, "__self__", None), "name", None) or repr(call))


class Recorder:
    """The marker launches and the call log of one process's recording."""

    def __init__(self, torch: ModuleType, marker: CompiledKernel) -> None:
        """:param torch: the torch module (a stand-in in tests).
        :param marker: the compiled :data:`gemmreg.timing.work_recording.MARKER_SOURCE`."""
        self.torch = torch
        self.marker = marker
        self.owners: list[str] = []
        self.checked: list[bool] = []
        self.profiler: profile | None = None
        self.direct: cupti_recorder.CuptiRecorder | None = None
        self.backend = ""
        """What recorded: ``CUPTI``, or torch's profiler and why not CUPTI."""
        self.active = True
        """Whether calls are recorded now: always through torch's profiler;
        through CUPTI, in the rounds drawn to be recorded and the checked calls."""
        self._draw = random.SystemRandom()
        self._drawn = -1
        self.rounds_recorded = 0
        self.clock: GpuClock | None = None
        """The clock whose samples this recorder's markers bracket."""
        self.setup_s = 0.0

    def open(self) -> None:
        """Before a call: the opening marker (in a recorded round)."""
        if self.active:
            self.marker.launch((1, 1, 1), (1, 1, 1), [])

    def close(self, call: Callable[[], None], checked: bool = False) -> None:
        """After a call: the closing marker, and whose call it was (in a recorded round)."""
        if self.active:
            self.marker.launch((1, 1, 1), (1, 1, 1), [])
            self.owners.append(_owner(call))
            self.checked.append(checked)

    def round_begins(self, index: int) -> None:
        """Before round ``index``'s slots: record it if it is drawn
        (:data:`SAMPLE_BLOCK`); every round where CUPTI cannot be switched
        unseen (torch's profiler)."""
        if self.direct is None:
            return
        if index % SAMPLE_BLOCK == 0:
            self._drawn = index + self._draw.randrange(SAMPLE_BLOCK)
        if index == self._drawn:
            self.torch.cuda.synchronize()
            self.direct.resume()
            self.active = True
            self.rounds_recorded += 1

    def round_ends(self) -> None:
        """After a round's slots: stop recording until the next drawn round."""
        if self.direct is not None and self.active:
            self.torch.cuda.synchronize()
            self.direct.pause()
            self.active = False

    def record_alone(self) -> None:
        """Record from now on whatever the draw (the checked calls)."""
        if self.direct is not None and not self.active:
            self.torch.cuda.synchronize()
            self.direct.resume()
        self.active = True

    def start(self) -> None:
        """Record from now on: through CUPTI directly where ``cupti-python``
        is installed (no torch state changes, set-up in milliseconds:
        :mod:`gemmreg.instruments.cupti_recorder`), else through torch's profiler
        (CUDA activity only; seconds of set-up)."""
        began = time.perf_counter()
        self.torch.cuda.synchronize()
        direct, why = cupti_recorder.open_recorder()
        if direct is not None:
            direct.start()
            direct.pause()  # until the first round drawn (round_begins)
            self.direct, self.backend, self.active = direct, "CUPTI", False
        else:
            from torch.profiler import ProfilerActivity, profile

            self.profiler = profile(activities=[ProfilerActivity.CUDA])
            self.profiler.__enter__()
            self.backend = f"torch's profiler; {why}"
        self.setup_s = time.perf_counter() - began

    def stop(self) -> list[Activity] | None:
        """Stop the recording (once); the device activities it recorded, or
        None when it was stopped already."""
        profiler, self.profiler = self.profiler, None
        direct, self.direct = self.direct, None
        if self.clock is not None:
            self.clock.marks = None
        if profiler is None and direct is None:
            return None
        self.torch.cuda.synchronize()
        if direct is not None:
            return direct.stop()

        assert profiler is not None  # not CUPTI and not stopped already: torch's profiler
        profiler.__exit__(None, None, None)
        return profiler_activities(profiler)
