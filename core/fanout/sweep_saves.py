"""The saves of a sweep whose points finish in any order, on several GPUs
(:mod:`gemmreg.fanout.sharded_sweep`) or a Ray cluster
(:mod:`gemmreg.fanout.ray_sweep`), until the storage refuses one.

A sweep on one GPU stops at the first save the storage refuses (a full
disk, a folder made read-only) and ends with the table of every point it
measured, one line and exit 4 (:func:`gemmreg.fanout.sweeping.sweep`).
Spread over several GPUs, the refusal came from a device thread or a Ray
callback, and ended the command with the line alone: the figures of the
points still in flight, and the table, were lost. :class:`Saves` keeps the
refusal instead of raising it, so the sweep can stop handing out points, let
the ones in flight finish and print, and return what it measured with the
refusal (:attr:`gemmreg.fanout.sweeping.Sweep.not_saved`); the run on
disk stays its last save that succeeded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
from gemmreg.fanout import sweeping
from gemmreg.reporting.not_saved import RunNotSaved
from gemmreg.timing.timing_records import CompareReport


@attrs.define
class Saves:
    """One sweep's run in ``out``, saved again as points finish."""

    out: Path
    manifest: dict[str, object]
    refused: RunNotSaved | None = None
    """The first save the storage refused; none is tried after it."""
    kept: tuple[CompareReport, ...] = ()
    """The points of the last save that succeeded: the run on disk."""
    kept_partial: bool = True
    """Whether that save was marked partial (nothing saved: nothing whole)."""

    def save(self, reports: Sequence[CompareReport], partial: bool) -> bool:
        """Save ``reports`` unless a save was refused already; False when
        this one or an earlier one was refused (the sweep should stop)."""
        if self.refused is not None:
            return False
        try:
            sweeping.save(self.out, self.manifest, reports, partial)
        except RunNotSaved as error:
            self.refused = error
            return False
        self.kept, self.kept_partial = tuple(reports), partial
        return True

    def note(self) -> None:
        """After a refusal, try once to say in the saved run why it ends
        early (:func:`gemmreg.fanout.sweeping.note_not_saved`); a run
        whose last save was already whole is left as it is."""
        if self.refused is not None and self.kept_partial:
            sweeping.note_not_saved(self.out, self.manifest, self.kept, self.refused)
