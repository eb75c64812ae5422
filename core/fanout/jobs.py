"""The timing work a command hands its executor (:mod:`gemmreg.fanout.executors`),
one record each: ``bench``'s points (:class:`SweepJob`) and ``compare``'s
processes (:class:`CompareJob`). The runners take the record whole, where
they took its fields one by one, so a field added to a job reaches every
runner without being passed on by hand in each executor; the runners
(:mod:`gemmreg.fanout.sweeping`, :mod:`gemmreg.fanout.sharded_sweep`,
:mod:`gemmreg.fanout.ray_sweep`, :mod:`gemmreg.fanout.ray_compare`) import
them from here, below the executors that choose among them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from gemmreg.contract.backend import BackendInfo
from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.reporting.progress import Meter
from gemmreg.reporting.timing_lines import Progress
from gemmreg.timing.timing_options import TimingOptions


@attrs.frozen(kw_only=True)
class SweepJob:
    """``bench``'s points, each timed on every kernel; the run is saved to
    ``out`` after each point (:func:`gemmreg.fanout.sweeping.sweep`)."""

    kernels: Sequence[RegisteredKernel]
    problems: Sequence[Problem]
    timing: TimingOptions
    info: BackendInfo
    out: Path
    progress: Progress
    meter: Meter | None = None
    """Counts the points (their work, 2MNK; once per device model)."""
    weights: Sequence[float] | None = None
    """One per point, into its report."""
    ahead: Any = None
    """Workers started ahead for this executor (:func:`gemmreg.commands.launching.start_ahead`)."""
    fields: Mapping[str, object] = attrs.field(factory=dict)
    """The manifest's fields besides the environment's."""


@attrs.frozen(kw_only=True)
class CompareJob:
    """``compare``'s processes at one point, cold starts first."""

    kernels: Sequence[RegisteredKernel]
    problem: Problem
    timing: TimingOptions
    info: BackendInfo
    progress: Progress
    meter: Meter | None = None
    ahead: Any = None
    """Workers started ahead for this executor."""
    keep_cache: Path | None = None
    """Where the timed processes' caches are kept for a profiler run afterwards."""
