"""The records of a comparison, from each kernel's summary to the verdicts.

They are frozen attrs classes: the comparison builds them, renderers and
saved runs read them, and ``from_dict`` rebuilds them from a saved run. The
records of one process's figures are :mod:`gemmreg.timing.process_records`'s,
re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import attrs
from gemmreg.contract.records import Problem
from gemmreg.contract.serialization import from_jsonable
from gemmreg.contract.traffic import ideal_gbps
from gemmreg.timing.process_outliers import outlier_medians
from gemmreg.timing.process_records import ColdStart as ColdStart
from gemmreg.timing.process_records import ProcessRecord as ProcessRecord
from gemmreg.timing.process_records import ProcessRun as ProcessRun
from gemmreg.timing.process_records import float_tuple, str_tuple
from gemmreg.timing.stats import Interval

VerdictWord = Literal[
    "faster",
    "slower",
    "equivalent",
    "inconclusive",
    "invalid",
    "no verdict",
    "indistinguishable",  # schema 1 only: saved runs keep the words they were judged with
]
Execution = Literal["native", "interpreted"]
"""How a kernel's code ran: ``interpreted`` under Triton's interpreter (a
correctness tool: NumPy on the host), else ``native``."""
SCHEMA = 3
"""Saved-run layout. 1: adaptive per-kernel sampling (samples per process);
2: paired rounds, regimes, cold starts apart; 3: the figures of the regimes
measured beside the primary one in the timing processes kept by regime
(``regime_ms``), no longer a field each. A verdict's regimes
(:mod:`gemmreg.timing.regimes`): the whole call with events and a cold L2 (the
primary regime); those registered beside it (warm, launch-free CUDA-graph
replays); and the summed durations of the device work the call caused, from
CUPTI (:mod:`gemmreg.timing.regime_device`), whose figures keep their fields
(``device_kernel_ms`` to ``device_process_call_ms``)."""


def _regimes(value: Iterable[RegimeResult] | None) -> tuple[RegimeResult, ...]:
    return tuple(value) if value is not None else ()


def _ints(value: Iterable[int] | None) -> tuple[int, ...]:
    return tuple(value) if value is not None else ()


def _float_rows(value: Iterable[Iterable[float]]) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(item) for item in value)


HELD_WORDS = "each batch of samples queued in full before the GPU runs it"
"""What a GPU report's clock line says since each batch's stream has been held
until the host had queued it (:mod:`gemmreg.instruments.stream_hold`); lines of
runs saved before the hold say "queued behind a spin"."""


@attrs.frozen(kw_only=True)
class KernelSummary:
    kernel: str
    package: str
    precision: str
    math: str
    """The precision's math class: what "like for like" is judged on."""
    generator: str
    status: str
    """``timed`` when every process timed it and every check passed;
    ``interrupted`` when its point was cut short before any process finished."""
    execution: Execution = "native"
    """A speed ratio between an ``interpreted`` and a ``native`` kernel says
    nothing about the kernels (:mod:`gemmreg.timing.verdicts`). Runs saved before it
    was recorded read ``native``."""
    reason: str = ""
    asked: bool = True
    """False when the problem is outside what the kernel declares, or the
    kernel cannot run here: it is in the table, with its reason, but no
    verdict pairs it with anything (there was no question to answer; a sweep
    of fp32-only kernels in fp16 printed a NO VERDICT row per pair). Runs
    saved before it was recorded read True."""
    vendor_library: bool = False
    process_medians_ms: tuple[float, ...] = attrs.field(default=(), converter=float_tuple)
    outlier_medians_ms: tuple[float, ...] = attrs.field(
        default=attrs.Factory(lambda s: outlier_medians(s.process_medians_ms), takes_self=True),
        converter=float_tuple,
    )
    """The process medians far from the rest (:mod:`gemmreg.timing.process_outliers`):
    derived from ``process_medians_ms``, here and again by the report that holds
    the summary, so runs saved before it existed have it when read."""
    center_ms: float | None = None
    low_ms: float | None = None
    high_ms: float | None = None
    tflops: float | None = None
    ideal_gbps: float | None = None
    """The problem's ideal traffic over ``center_ms``, in GB/s
    (:func:`gemmreg.contract.traffic.ideal_gbps`): the rate the call needed,
    not measured DRAM traffic. Set by the report that holds the summary (which
    knows the problem), so runs saved before it existed have it when read."""
    peak_tflops: float | None = None
    percent_of_peak: float | None = None
    regime_ms: dict[str, float] = attrs.field(factory=dict)
    """The median of its processes' figures in each regime measured beside the
    primary one, by regime (:mod:`gemmreg.timing.regimes`). Runs saved before
    (schema 2 and older) kept each in a field of its own (``graph_ms``), read
    into here."""
    variants: tuple[str, ...] = attrs.field(default=(), converter=str_tuple)
    """What its timed launches ran, as the plugin named it (``gemmreg.variant``):
    each name once, in process order; more than one where processes chose
    differently (a tuner's close call). Empty where the plugin names nothing,
    and in runs saved before it was recorded."""
    host_ms: float | None = None
    """The host's time per call (the launch path an end-to-end sample no
    longer holds, :mod:`gemmreg.instruments.stream_hold`): the median of the
    processes' figures; None on the CPU and in runs saved before it was recorded."""
    device_kernel_ms: float | None = None
    """The device work of a profiled call (CUPTI), summed. This and the five
    fields after it are set by the device-kernel regime
    (:class:`gemmreg.timing.regime_device.DeviceKernels`) from the kernel's
    profile record; the vetoes (:mod:`gemmreg.timing.vetoes`) and ``gemmreg
    profiler`` read them as facts of the device profile, so they stay fields."""
    launches_per_call: float | None = None
    device_kernels: tuple[str, ...] = attrs.field(default=(), converter=str_tuple)
    """The device kernels the profiled calls launched (names as the profiler
    reports them): which code path was timed. Empty without a device profile,
    and in runs saved before it was recorded."""
    device_call_ms: tuple[float, ...] = attrs.field(default=(), converter=float_tuple)
    """Each profiled call's device time, in call order (``DeviceProfile.call_ms``)."""
    device_interleaved: bool = False
    """The profiled calls alternated round by round with the other kernels'
    (``DeviceProfile.interleaved``): ``device_call_ms`` pair by round."""
    device_process_call_ms: tuple[tuple[float, ...], ...] = attrs.field(
        default=(), converter=_float_rows
    )
    """With several profiling processes (``--device-processes``), each one's
    interleaved calls' device times in process order, ``()`` for a process
    that gave none (unprofiled, or not interleaved); empty with one process,
    and in runs saved before it was recorded."""
    launch_bound: bool = False
    """Launch overhead dominates its end-to-end figure (set by the graph-replay
    regime, :mod:`gemmreg.timing.regime_graph`)."""
    tile_efficiency: float | None = None
    """Useful 2MNK over the work of the padded tiles (1.0: no tail waste)."""
    cold_prepare_s: float | None = None
    cold_first_call_s: float | None = None
    warm_prepare_s: float | None = None
    warm_first_call_s: float | None = None
    samples: int = 0
    exposure_s: float = 0.0
    max_error: float | None = None
    rtol: float | None = None
    """The declared tolerance ``max_error`` was held to (rtol, atol, and why);
    None in runs saved before it was kept beside the error."""
    atol: float | None = None
    tolerance_why: str = ""
    invalid: tuple[str, ...] = attrs.field(default=(), converter=str_tuple)
    """Why no speed claim may rest on this kernel's figures (escaped work, above peak)."""
    flags: tuple[str, ...] = attrs.field(default=(), converter=str_tuple)

    def __attrs_post_init__(self) -> None:
        """A timed kernel has its figures: a saved run that says otherwise is
        refused when read, not when a table is drawn from it."""
        if self.status != "timed":
            return
        figures = (self.center_ms, self.low_ms, self.high_ms)
        if not self.process_medians_ms or any(f is None or not f > 0 for f in figures):
            raise ValueError(
                f"{self.kernel}: status 'timed' needs process medians and positive "
                "center_ms, low_ms and high_ms"
            )
        if not all(m > 0 for m in self.process_medians_ms):
            raise ValueError(f"{self.kernel}: process medians must be positive")


@attrs.frozen(kw_only=True)
class RegimeResult:
    regime: str
    word: str
    interval: Interval | None = None
    estimate: float | None = None
    reason: str = ""
    settled: bool = True
    """False for a one-process figure that its own paired rounds cannot tell
    from 1 (the device kernels' interleaved rounds): it neither contradicts
    a verdict nor supports one."""


@attrs.frozen(kw_only=True)
class Verdict:
    baseline: str
    kernel: str
    verdict: VerdictWord
    speedup: float | None
    """baseline time / this kernel's time: the estimate of the primary regime."""
    interval: tuple[float, float] | None
    """Its interval across processes, at ``confidence``."""
    explanation: str
    regime: str = "end-to-end"
    confidence: float | None = None
    regimes: tuple[RegimeResult, ...] = attrs.field(default=(), converter=_regimes)
    notes: tuple[str, ...] = attrs.field(default=(), converter=str_tuple)
    processes: int | None = None
    """The processes the verdict rests on: in a sequential run, those of the
    look that decided it (:mod:`gemmreg.timing.sequential`); None in runs
    saved before it was recorded."""

    @property
    def faster(self) -> bool:
        """Judged FASTER than the baseline."""
        return self.verdict == "faster"

    @property
    def slower(self) -> bool:
        """Judged SLOWER than the baseline."""
        return self.verdict == "slower"

    @property
    def not_slower(self) -> bool:
        """Shown to be at least level with the baseline: FASTER or EQUIVALENT
        (within the margin). INCONCLUSIVE is not: nothing was shown."""
        return self.verdict in ("faster", "equivalent")


@attrs.frozen(kw_only=True)
class CompareReport:
    problem: Problem
    processes: int
    seed: int
    clock: str
    device_name: str
    summaries: tuple[KernelSummary, ...]
    verdicts: tuple[Verdict, ...]
    runs: tuple[ProcessRun, ...]
    cold: tuple[ColdStart, ...] = ()
    records: tuple[ProcessRecord, ...] = ()
    profiles: dict[str, Any] = attrs.field(factory=dict)
    """Each kernel's device profile (CUPTI) from the profiling process, as saved."""
    margin: float | None = None
    confidence: float | None = None
    repeats: int | None = None
    """Fixed rounds per process, or None for the stopping rule."""
    warmup: int | None = None
    partial: bool = False
    device_index: int | None = None
    """The GPU the point ran on (torch's index in the parent), when the run
    was spread over several (``--devices``); None: the one device there was."""
    weight: float | None = None
    """How much this point counts in a summary over points (a shapes file's
    ``weight``: how often a model calls the shape); None when none was given."""
    schema: int = SCHEMA
    """The layout of these records; runs saved before it existed are schema 1."""
    looks: tuple[int, ...] = attrs.field(default=(), converter=_ints)
    """The processes finished at each look of a sequential run (gemmreg.timing.sequential);
    empty for a fixed count (``--processes``) and in runs saved before looks existed."""
    look_s: tuple[float, ...] = attrs.field(default=(), converter=float_tuple)
    """The seconds its processes had taken at each of ``looks`` (the later batches'
    start-ups included, as ``--budget`` counts); empty for a fixed count and in older runs."""
    budget_s: float | None = None
    """The seconds of timed processes a sequential run could spend (``--budget``)."""
    l2: str = ""
    """What the flush before each sample left in L2 on a GPU, ``clean`` or
    ``dirty`` (``--l2``); '' on the CPU and in runs saved before ``--l2`` existed,
    whose GPU flush zeroed its buffer (left it dirty)."""
    family: int = attrs.field(default=1, validator=attrs.validators.ge(1))
    """The points this point's verdicts were judged together with
    (``bench --sweep-wide``: the sweep's planned points), each at
    ``stats.family_confidence(confidence, family)`` so that a false claim
    anywhere among them stays within ``1 - confidence``; 1: judged on its own,
    at ``confidence`` (every run saved before the option existed)."""

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> CompareReport:
        """Rebuild a report saved with ``render.dumps``, in today's layout: a saved
        run's reports have been upgraded (:func:`gemmreg.reporting.schema_2.upgrade`)
        and checked against these records first (:mod:`gemmreg.reporting.run_schema`,
        which refuses non-finite numbers)."""
        return from_jsonable(cls, data)

    def __attrs_post_init__(self) -> None:
        """Every summary carries the figures it derives from its others and
        the problem (its ideal GB/s, its outlying process medians) under
        today's rules, however the report was built: summarised, by hand, or
        read from a run saved before those fields existed (or with stale ones)."""
        derived = tuple(_derived(s, self.problem) for s in self.summaries)
        if derived != self.summaries:  # frozen: attrs' way to set a field after init
            object.__setattr__(self, "summaries", derived)


def _derived(s: KernelSummary, problem: Problem) -> KernelSummary:
    gbps, outliers = ideal_gbps(problem, s.center_ms), outlier_medians(s.process_medians_ms)
    if (s.ideal_gbps, s.outlier_medians_ms) == (gbps, outliers):
        return s
    return attrs.evolve(s, ideal_gbps=gbps, outlier_medians_ms=outliers)
