"""The records of one timed worker process: each kernel's run in it, what
it says of its rounds as a whole, and a kernel's cold start in a fresh one.

They are what a process hands back and a saved run keeps per process; the
comparison's own records (:mod:`gemmreg.timing.timing_records`) are built
from them, and re-export them. The tuple converters here are typed per item,
so a record's constructor says what its fields hold (a generic converter
leaves mypy's attrs plugin with an unsolved type).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

import attrs
from gemmreg.instruments.work_accounting import WorkAccounting


def float_tuple(value: Iterable[float] | None) -> tuple[float, ...]:
    return tuple(value) if value is not None else ()


def str_tuple(value: Iterable[str] | None) -> tuple[str, ...]:
    return tuple(value) if value is not None else ()


@attrs.frozen(kw_only=True)
class ColdStart:
    """Prepare and first call of one kernel in its own fresh process, with
    empty compile caches: the cost a user pays once."""

    kernel: str
    status: str
    prepare_s: float | None = None
    first_call_s: float | None = None
    reason: str = ""


@attrs.frozen(kw_only=True)
class ProcessRun:
    """One kernel, timed in one worker process."""

    kernel: str
    process: int
    status: str
    """``timed``, ``failed`` (a correctness check), ``skipped``, ``error``, ``crashed`` or ``timeout``."""
    round_ms: tuple[float, ...] = attrs.field(default=(), converter=float_tuple)
    """This kernel's figure in each kept round (the median of its slot)."""
    samples: int = 0
    exposure_s: float = 0.0
    """Wall time of all its slots: equal for every kernel of the process, by construction."""
    prepare_s: float | None = None
    first_call_s: float | None = None
    variant: str = ""
    """What its launch ran, as the plugin named it (``gemmreg.variant``); ''
    where it named nothing, and in runs saved before it was recorded."""
    regime_ms: dict[str, float] = attrs.field(factory=dict)
    """Its figure in each regime measured beside the primary one, by regime
    (:mod:`gemmreg.timing.regimes`); a regime without one is left out. Runs
    saved before (schema 2 and older) kept each in a field of its own
    (``graph_ms``), read into here."""
    host_ms: float | None = None
    """The host's time per call (its launch path), median over the kept rounds;
    None on the CPU and in runs saved before it was recorded."""
    escaped: str = ""
    """Why some of the call's device work outlived its timed interval, or ''."""
    precheck: dict[str, Any] | None = None
    postcheck: dict[str, Any] | None = None
    reason: str = ""
    accounting: WorkAccounting | None = None
    """The device work of its timed calls (:mod:`gemmreg.instruments.work_accounting`);
    None where none was recorded, and in runs saved before it was."""

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.round_ms) if self.round_ms else None


@attrs.frozen(kw_only=True)
class ProcessRecord:
    """What one process says of the rounds as a whole."""

    process: int
    status: str
    stop_reason: str = ""
    rounds: int = 0
    dropped: tuple[str, ...] = attrs.field(default=(), converter=str_tuple)
    """The reason each dropped round was dropped."""
    soak_s: float | None = None
    soak_steady: bool | None = None
    monitor: str = ""
    """Why no clock readings were taken, or ''."""
    clock_trace: dict[str, object] = attrs.field(factory=dict)
    """Summary of the clock, power and temperature readings of the rounds."""
    log_ratios: dict[str, dict[str, float]] = attrs.field(factory=dict)
    """Regime -> "baseline|kernel" -> this process's paired log-ratio."""
    reason: str = ""
    placements: int | None = None
    """Copies of each kernel's operands rotated across the rounds
    (gemmreg.timing.placements); None in runs saved before placements rotated."""
    device_index: int | None = None
    """The GPU this process ran on (torch's index in the parent) when the
    processes were spread over several (``compare --devices``); None: the
    one device there was, or a run saved before it was recorded."""
    host: str = ""
    """The node it ran on, for a comparison on a Ray cluster; '' on this host."""
    queued: str = ""
    """Why its batches of samples were (from some point on) led by a spin
    instead of held until queued (:mod:`gemmreg.instruments.stream_hold`); ''
    where every batch was held, on the CPU, and in runs saved before batches were
    held (whose batches were all led by a spin: their clock line says so)."""
    retakes: tuple[str, ...] = attrs.field(default=(), converter=str_tuple)
    """One line per batch of samples taken again because its hold gave up (the
    GPU may have timed the host): how long the host took to queue the batch's
    slowest chunk, against the hold's timeout of about 0.14 s; () in runs saved
    before such batches were retaken, which kept them."""
    accounting: str = ""
    """Whether its timed calls' device work was recorded: ``on (...)`` with
    the cost, ``off: why``; '' in runs saved before it was."""
