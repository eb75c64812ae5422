"""What a worker task returns: one record per task kind (:mod:`gemmreg.workers.tasks`).

The worker builds these; :mod:`gemmreg.workers.task_wire` carries them across the
process boundary as JSON and reads them back, in one place, for every caller.
Records the saved files keep in their own, older shape (a case's comparison
in ``check.json``, a kernel's profile in ``run.json``) say so where they are
turned into it.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from gemmreg.contract.records import Tolerance
from gemmreg.contract.serialization import plain
from gemmreg.instruments.device_profile import DeviceProfile
from gemmreg.instruments.work_accounting import WorkAccounting
from gemmreg.timing.rounds import Round


@attrs.frozen(kw_only=True)
class Comparison:
    """How one output compares with the float64 reference."""

    passed: bool
    max_error: float
    """max |C - ref| / (|A| @ |B|): the figure the tolerance's rtol bounds."""
    max_abs_error: float
    bad_count: int
    total: int
    first_bad: tuple[tuple[int, int, float, float], ...] = ()
    """(row, column, got, expected) of the first few mismatches."""
    nan_mismatch: int = 0
    """Elements where the kernel produced NaN/Inf and the reference did not, or back."""
    reason: str = ""
    tolerance: Tolerance | None = None
    """The bound the output was held to, kept beside the error it bounds: "pass,
    max err 0.104" alone reads as a contradiction; "(tol 0.125)" explains it."""
    tolerance_used: float | None = None
    """max |C - ref| / (rtol * |A|@|B| + atol) over the finite elements: the
    share of its bound the worst element used, in the tolerance's own terms
    (a case passes up to 1). ``max_error`` is in units of |A|@|B| alone, and
    where the absolute part carries the bound (a K of 1, values near 0) it
    reads far past rtol on a case that passed; None in checks saved before."""

    def recorded(self) -> dict[str, Any]:
        """As a check or a timing run keeps it (``CaseResult.comparison``,
        ``ProcessRun.precheck``): a plain object, the fields as they are."""
        recorded: dict[str, Any] = plain(self)
        return recorded


@attrs.frozen(kw_only=True)
class ValuesResult:
    """A values case: its comparison with the reference, or, where none was
    made (the plugin changed torch's global state), only the verdict and why."""

    passed: bool
    reason: str = ""
    comparison: Comparison | None = None

    @classmethod
    def of(cls, comparison: Comparison) -> ValuesResult:
        return cls(passed=comparison.passed, reason=comparison.reason, comparison=comparison)

    def recorded(self) -> dict[str, Any]:
        """As ``check.json`` keeps it: the comparison's fields, or ``passed``
        and ``reason`` alone where there was no comparison."""
        if self.comparison is None:
            return {"passed": self.passed, "reason": self.reason}
        return self.comparison.recorded()


@attrs.frozen(kw_only=True)
class RefusalResult:
    """A refusal case: did the kernel refuse the undeclared problem, and how."""

    passed: bool
    reason: str


@attrs.frozen(kw_only=True)
class CaseAnswer:
    """A case of any other registered check kind (a ``case`` task): its
    verdict, why, and what it measured, as ``check.json`` keeps it
    (``CaseResult.comparison``: ``max_error``, ``first_bad`` and ``tolerance``
    are shown where present)."""

    passed: bool
    reason: str = ""
    comparison: dict[str, Any] | None = None


@attrs.define(kw_only=True)
class KernelTiming:
    """One kernel in one worker process: its prepare and first call, its
    checks, and (in a timing process) its rounds. Filled in as the process
    goes; a cold start is this record with the first call alone."""

    status: Literal["ok", "failed", "error"] = "ok"
    """``failed``: a check or a change to torch's state; ``error``: it raised."""
    reason: str = ""
    prepare_s: float | None = None
    first_call_s: float | None = None
    variant: str = ""
    """What its launch runs, as the plugin named it (``gemmreg.variant``), or ''."""
    precheck: Comparison | None = None
    postcheck: Comparison | None = None
    round_ms: tuple[float, ...] = attrs.field(default=(), converter=tuple)
    """Its figure in each kept round."""
    placements: int = 1
    """Copies of its operands it was timed in (:mod:`gemmreg.timing.placements`)."""
    regime_errors: dict[str, str] = attrs.field(factory=dict)
    """Why a regime measured beside the rounds could not measure it, by regime
    (:mod:`gemmreg.timing.regimes`): a CUDA graph of its call that could not be
    captured."""
    sync_escape: str | None = None
    """Why some of its device work outlived the call's interval, or None."""
    accounting: WorkAccounting | None = None
    """The device work of its timed calls (:mod:`gemmreg.timing.work_recording`),
    or None where none was recorded."""


@attrs.frozen(kw_only=True)
class Soak:
    """The heat soak before the rounds (:func:`gemmreg.timing.round_loops.heat_soak`)."""

    s: float
    calls: dict[str, int]
    steady: bool
    sample_cost_s: dict[str, float]
    readings: tuple[dict[str, Any], ...] = attrs.field(default=(), converter=tuple)


@attrs.define(kw_only=True)
class RoundsResult:
    """Everything one timing process learns about every kernel of a
    comparison (:func:`gemmreg.timing.timing.measure_group`), filled in as it goes."""

    clock: str
    l2: str | None
    """What the flush before each sample left in L2
    (``gemmreg.timing.timing_options.L2_STATES``), None where nothing was
    flushed (the CPU)."""
    policy: dict[str, Any]
    """The process's budgets (``gemmreg.timing.timing.Policy``), as it applied them."""
    kernels: dict[str, KernelTiming] = attrs.field(factory=dict)
    monitor: str = ""
    """Why no clock readings were taken, or ''."""
    queued: str = ""
    """Why some batches of samples were led by a spin instead of held until
    queued (:mod:`gemmreg.instruments.stream_hold`), or '' (and on the CPU)."""
    retakes: tuple[str, ...] = ()
    """Why each batch taken again because its hold gave up was (the host's
    slowest chunk to queue), or () (and on the CPU)."""
    soak: Soak | None = None
    stop_reason: str = ""
    accounting: str = ""
    """Whether the timed calls' device work was recorded: ``on (...)`` with
    its cost, ``off: why``, or '' (:mod:`gemmreg.timing.work_recording`)."""
    rounds: tuple[Round, ...] = ()
    regime_rounds: dict[str, tuple[Round, ...]] = attrs.field(factory=dict)
    """The rounds of each regime measured beside the primary ones, by name
    (:mod:`gemmreg.timing.regimes`); none on the CPU."""


@attrs.frozen(kw_only=True)
class KernelProfile:
    """One kernel's device work per call (CUPTI), or why there is none."""

    profile: DeviceProfile | None = None
    unavailable: str = ""


@attrs.frozen(kw_only=True)
class ProfileResult:
    """The profiling process's answer, for every kernel it was given."""

    kernels: dict[str, KernelProfile] = attrs.field(factory=dict)

    def recorded(self) -> dict[str, Any]:
        """As ``run.json`` keeps it (``CompareReport.profiles``): per kernel,
        ``{"profile": {...}}`` or ``{"profile_unavailable": why}``."""
        return {
            name: {"profile": k.profile.to_dict()}
            if k.profile is not None
            else {"profile_unavailable": k.unavailable}
            for name, k in self.kernels.items()
        }


TaskResult = ValuesResult | RefusalResult | CaseAnswer | KernelTiming | RoundsResult | ProfileResult
