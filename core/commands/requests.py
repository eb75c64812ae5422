"""What the user asks of ``compare``, ``bench`` and ``check``: one record
each, built once, from the command line (:mod:`gemmreg.commands.cli_points`)
or from a call of the Python API (:mod:`gemmreg.api`), and checked here for
both. The commands' work (:mod:`gemmreg.commands`) reads the record,
never argparse's namespace or a call's keywords, so the two ways in cannot
drift apart: an option the API does not take is a field it leaves at its
default.

A field is named as its option (``max_time`` is ``--max-time``), so that a
refusal names it as the user wrote it
(:data:`gemmreg.commands.request_values.Spell`). On the command line argparse
has bounded the numbers already, with the same words
(:func:`gemmreg.contract.options.integer_bounds`); a call's keywords are
bounded here (by :mod:`gemmreg.commands.request_values`), and a value of the
wrong type is refused in one line too, never left to fail deep in a worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs
from gemmreg.commands.request_values import (
    Spell,
    check_batches,
    check_integer,
    check_names,
    check_number,
    check_timeout,
)
from gemmreg.contract import options as opt
from gemmreg.contract.bad_input import did_you_mean
from gemmreg.contract.options import UsageError
from gemmreg.contract.records import BatchLayout, DType, Layout, OutDType, Problem, Scaling
from gemmreg.timing.points import Point
from gemmreg.timing.timing_options import L2_STATES, TimingOptions

_INTEGERS: dict[str, tuple[int, int]] = {
    "processes": (1, opt.MAX_PROCESSES),
    "device_processes": (1, opt.MAX_PROCESSES),
    "repeats": (1, opt.MAX_REPEATS),
    "warmup": (0, opt.MAX_WARMUP),
    "seed": (0, opt.MAX_SEED),
}
_NUMBERS: dict[str, tuple[float, float, bool]] = {
    "budget": (0.0, opt.MAX_BUDGET_S, False),
    "max_time": (0.0, opt.MAX_TIME_S, True),
    "margin": (0.0, opt.MAX_MARGIN_PCT, True),
}
"""Each bounded number: (low, high, low_open), as argparse bounds the option."""


@attrs.frozen(kw_only=True)
class TimingAsked:
    """The timing options as the user gave them; None: the backend's default
    (:func:`gemmreg.timing.timing_options.timing_options` fills it in)."""

    processes: int | None = None
    """A fixed count of independent timing processes."""
    budget: float | None = None
    """Seconds of timed processes a point may spend until every pair is decided."""
    repeats: int | None = None
    warmup: int | None = None
    seed: int | None = None
    max_time: float | None = None
    """Cap on the seconds of rounds per process."""
    margin: float | None = None
    """The equivalence margin in percent (1.0: +-1%), as ``--margin`` takes it."""
    timeout: float | None = None
    """Seconds one worker task may take."""
    l2: str | None = None
    device_processes: int | None = None

    def given(self) -> dict[str, object]:
        """The options given, by field name (those left to the default are
        absent): what a sweep's manifest keeps for ``bench --resume``."""
        return attrs.asdict(self, filter=lambda _, value: value is not None)

    def check(self, spell: Spell, ray: bool = False, pairs: bool = True) -> None:
        """Refuse what no run can take, in one line; ``ray``: a comparison
        on a Ray cluster, which times a fixed count; not ``pairs``: a sweep
        of one kernel, which judges no pair."""
        for name, (first, last) in _INTEGERS.items():
            check_integer(getattr(self, name), first, last, spell(name))
        for name, (low, high, low_open) in _NUMBERS.items():
            check_number(getattr(self, name), low, high, low_open, spell(name))
        check_timeout(self.timeout, spell("timeout"))
        if self.l2 is not None and self.l2 not in L2_STATES:
            raise UsageError(
                f"{spell('l2')}: invalid choice: {self.l2!r} (choose from {L2_STATES})"
                + did_you_mean(self.l2, L2_STATES)
            )
        processes, budget = spell("processes"), spell("budget")
        if self.budget is not None and self.processes is not None:
            raise UsageError(
                f"{processes} and {budget}: one or the other ({processes} fixes the count, "
                f"{budget} adds processes until every pair is decided)"
            )
        if self.budget is not None and ray:
            raise UsageError(
                f"{budget} and --ray: compare on Ray times a fixed count ({processes})"
            )
        from gemmreg.commands import option_effects

        option_effects.refuse_unused_timing_options(self, spell, pairs)

    def check_backend(self, gpu: bool, spell: Spell) -> None:
        """Refuse, once the backend is known, the options that only a GPU's timing reads."""
        from gemmreg.commands import option_effects

        option_effects.refuse_gpu_timing_options(self, gpu, spell)

    def options(self, gpu: bool, sweep: bool = False, fixed: bool = False) -> TimingOptions:
        """With the backend's defaults filled in; ``fixed``: a run that cannot
        add processes (``--ray``)."""
        from gemmreg.timing import timing_options

        return timing_options.timing_options(
            gpu,
            sweep=sweep,
            processes=self.processes,
            repeats=self.repeats,
            warmup=self.warmup,
            seed=self.seed,
            max_time_s=self.max_time,
            margin_pct=self.margin,
            task_timeout=self.timeout,
            l2=self.l2,
            device_processes=self.device_processes,
            budget_s=self.budget,
            fixed=fixed,
        )


@attrs.frozen(kw_only=True)
class CompareRequest:
    """``compare``: two or more kernels timed at one shape, a verdict per
    pair at each dtype in turn."""

    kernels: tuple[str, ...]
    shape: tuple[int, int, int] | None = None
    """None: the backend's default (:func:`gemmreg.timing.timing_options.default_shape`)."""
    dtypes: tuple[DType, ...] = ("fp32",)
    """Each a point of its own, judged in turn, in this order."""
    layout: Layout = "rowmajor"
    out_dtype: OutDType | None = None
    """An fp8 point's C dtype; None: the dtype's default (bf16)."""
    scaling: Scaling | None = None
    """An fp8 point's scaling; None: the dtype's default (per tensor)."""
    batch: int = 1
    """The points' batch size: above 1, C[i] = A[i] @ B[i] for each item."""
    batch_layout: BatchLayout = "packed"
    groups: tuple[int, ...] = ()
    """A grouped point's member sizes (each member's m; n and k of ``shape``, its m
    their sum); (): not grouped."""
    timing: TimingAsked = TimingAsked()
    out: Path | None = None
    """Where the run is saved (claimed before any work); None: not saved."""
    force: bool = False
    """Replace a run ``out`` already holds."""
    weights: tuple[float, ...] | None = None
    """Each point's weight (one per dtype), where it came from a shapes file."""
    manifest: Mapping[str, Any] = attrs.field(factory=dict)
    """Fields the run's manifest records besides the environment's (where
    the point came from; the call that asked, for the Python API)."""

    def problems(self, gpu: bool) -> list[Problem]:
        """A point per dtype, at the one shape and layout."""
        from gemmreg.timing import timing_options
        from gemmreg.timing.points import points

        shape = self.shape or timing_options.default_shape(gpu)
        if self.groups:  # the members' rows stacked, at the shape's n and k
            shape = (sum(self.groups), shape[1], shape[2])
        fp8 = (self.out_dtype, self.scaling)
        batch = (self.batch, self.batch_layout)
        chosen = points([shape], [], list(self.dtypes), [self.layout], *fp8, batch, self.groups)
        return [p.problem for p in chosen]


@attrs.frozen(kw_only=True)
class BenchRequest:
    """``bench``: kernels timed at every point of a sweep, saved after each."""

    kernels: tuple[str, ...]
    points: tuple[Point, ...]
    timing: TimingAsked = TimingAsked()
    out: Path | None = None
    """Where the run is saved; None: a new folder under ``runs/``."""
    force: bool = False
    weighted: bool = False
    """The points' weights were given (a shapes file) and go into each report."""
    manifest: Mapping[str, Any] = attrs.field(factory=dict)
    """Fields the run's manifest records besides the environment's: how the
    points were asked for (``shapes``, ``dtypes``, ``layouts``, ...)."""
    sweep_wide: bool = False
    """Judge the sweep's points together (``--sweep-wide``): each point's
    pairs at the run's level Bonferroni-corrected over the points, so that
    "never SLOWER anywhere" holds at 99.5%, and ``--budget`` adds processes
    until that level decides."""
    family: int | None = None
    """With :attr:`sweep_wide`, the points judged together where they are not
    this request's: the saved sweep's (``bench --resume``); None: this
    request's points, times the GPU models each is timed on."""


CheckLevel = Literal["quick", "full"]


@attrs.frozen(kw_only=True)
class CheckRequest:
    """``check``: the correctness matrix on the named plugins (all, when none)."""

    plugins: tuple[str, ...] = ()
    level: CheckLevel = "quick"
    dtypes: tuple[DType, ...] = ()
    """Empty: every dtype."""
    layouts: tuple[Layout, ...] = ()
    """Empty: every layout."""
    out_dtypes: tuple[OutDType, ...] = ()
    """The fp8 cases' output dtypes; empty: every one."""
    scalings: tuple[Scaling, ...] = ()
    """The fp8 cases' scalings; empty: both."""
    batches: tuple[int, ...] = (1,)
    """The batch sizes: 1, the matrix as it always was; each above it, batched cases."""
    batch_layouts: tuple[BatchLayout, ...] = ()
    """The batched cases' batch layouts; empty: every one."""
    grouped: bool = False
    """The matrix's grouped cases too (:mod:`gemmreg.checking.matrix_grouped`)."""
    seed: int | None = None
    """Every case's seed, in place of the matrix's own."""
    timeout: float | None = None
    out: Path | None = None
    force: bool = False
    sanitize: tuple[str, ...] = ()
    """The sanitizer tools of a pass after the matrix (``--sanitize``)."""

    def check(self, spell: Spell) -> None:
        from gemmreg.commands import option_effects

        check_names("check", self.plugins, 0)
        check_batches(self.batches, spell("batches"))
        check_integer(self.seed, 0, opt.MAX_SEED, spell("seed"))
        check_timeout(self.timeout, spell("timeout"))
        option_effects.refuse_force_without_out(self.out, self.force, spell, new_folder=False)
        option_effects.refuse_unused_check_options(self, spell)
