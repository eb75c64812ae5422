"""The timing regimes beside the primary one: a registry, one regime per
module ``gemmreg.timing.regime_<name>``, which registers it.

The primary regime, end to end (the whole call, events, a cold L2), is the
rounds every timing process takes (:mod:`gemmreg.timing.round_loops`); a
verdict is its word, its speedup is the verdict's, and its figures (median,
range, TFLOP/s, host ms) are the table's fixed columns. It is not registered:
everything else is measured, judged and shown relative to it.

Every regime registered here (:class:`Regime`) has a place in a verdict
after the primary one (by kind, then :attr:`Regime.rank`), its **columns**
(in ``compare``'s table and the summary rows, CSV), its **notes** on a
kernel's row and its lines of the **legend**. Two kinds:

- :class:`TimingRegime`: measured after the primary rounds, in the same
  process, on a GPU (the CUDA-graph replays). Its **measurement** is
  :meth:`TimingRegime.measure`, rounds of its own, handed back by regime name
  (``RoundsResult.regime_rounds``); its **figures** a process's figure for
  each kernel (:meth:`TimingRegime.process_figure`, ``ProcessRun.regime_ms``)
  and their summary across processes (:meth:`TimingRegime.summary_figure`,
  ``KernelSummary.regime_ms``), with any label it sets on the summary; its
  **verdict** each process's paired log-ratio of every pair
  (``ProcessRecord.log_ratios[name]``), judged across processes by the
  primary regime's rule. Its columns come before host ms.
- :class:`ProfiledRegime`: measured in processes of its own (the device
  kernels, CUPTI). Those processes are a task of their own, which the
  comparison runs after the timed ones (:mod:`gemmreg.timing.device_processes`),
  and their record is the comparison's ``profiles``; the regime makes its
  summary fields from a kernel's profile record
  (:meth:`ProfiledRegime.profile_fields`) and judges a pair by a rule of its
  own (:meth:`ProfiledRegime.judge`). Its columns come after host ms.
"""

from __future__ import annotations

import abc
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import attrs
from gemmreg.contract.prefixed_modules import import_prefixed

if TYPE_CHECKING:
    from gemmreg.contract.records import Problem
    from gemmreg.timing.rounds import Round
    from gemmreg.timing.timed_kernel import TimedKernel
    from gemmreg.timing.timing_options import Policy
    from gemmreg.timing.timing_records import KernelSummary, RegimeResult

PRIMARY = "end-to-end"
"""The regime a verdict's word and speedup are judged in."""
REGIME_MODULE_PREFIX = "regime_"
"""A module of :mod:`gemmreg.timing` named so defines (and registers) a regime."""


@attrs.frozen
class Column:
    """One figure of a regime as a column of the reports."""

    header: str
    """Its heading in ``compare``'s table."""
    name: str
    """Its column in the summary rows (``summary.csv``, a run's CSV)."""
    digits: int = 4
    """Significant digits of its figure in ``compare``'s table."""


class Regime(abc.ABC):
    """One regime beside the primary one: its verdict's place and what a
    report shows of it."""

    name: ClassVar[str]
    """Its word in verdicts, and its key in the records."""
    rank: ClassVar[int] = 100
    """Its place among the regimes of its kind: in verdicts, and in the tables' columns."""

    @abc.abstractmethod
    def columns(self) -> tuple[Column, ...]:
        """Its columns in ``compare``'s table and the summary rows."""

    @abc.abstractmethod
    def values(self, summary: KernelSummary) -> tuple[float | None, ...]:
        """A kernel's figure in each of its :meth:`columns` (None: none)."""

    def notes(self, summary: KernelSummary) -> list[str]:
        """What a timed kernel's row says of it in this regime (notes column)."""
        return []

    def legend(self) -> list[str]:
        """Its lines of ``compare``'s legend, from the constants in force."""
        return []


class TimingRegime(Regime):
    """A regime measured in the timing process, after the primary rounds:
    how it is measured, what it records, and how a report shows it."""

    column: ClassVar[str]
    """Its summary figure's column in the summary rows (``summary.csv``)."""
    header: ClassVar[str]
    """Its column's heading in ``compare``'s table."""
    digits: ClassVar[int] = 4
    """Significant digits of its figure in ``compare``'s table."""
    measuring: ClassVar[str]
    """What a timing process says it is doing while it measures this regime:
    a process that hangs there is blamed on it."""
    saved_as: ClassVar[str] = ""
    """The field of ``ProcessRun`` and ``KernelSummary`` its figure was kept in
    by runs saved before the figures were kept by regime (schema 2 and
    older); '' for a regime that came after."""

    @abc.abstractmethod
    def measure(
        self, kernels: Sequence[TimedKernel], policy: Policy, seed: int, problem: Problem
    ) -> Sequence[Round]:
        """In the timing process, on a GPU, after the primary rounds and their
        postcheck: this regime's rounds of ``kernels`` (each slot's figure is
        a kernel's time per call), [] when it does not apply. ``seed`` orders
        them; a kernel that cannot be measured says why in
        ``kernel.result.regime_errors[name]``."""

    def process_figure(self, kernel: str, taken: Sequence[Round]) -> float | None:
        """One process's figure of ``kernel``: the median of its slots (the
        upper one of an even count), None where it has none."""
        values = sorted(r.slot_ms[kernel] for r in taken if kernel in r.slot_ms)
        return values[len(values) // 2] if values else None

    def summary_figure(self, figures: Sequence[float]) -> float | None:
        """A kernel's figure over its processes' figures: their median."""
        return statistics.median(figures) if figures else None

    def summary_fields(self, center_ms: float, figure: float | None) -> Mapping[str, object]:
        """Fields of ``KernelSummary`` this regime sets, from the primary
        regime's median and its own figure (a label such as ``launch_bound``)."""
        return {}

    def columns(self) -> tuple[Column, ...]:
        """One column: its summary figure."""
        return (Column(self.header, self.column, self.digits),)

    def values(self, summary: KernelSummary) -> tuple[float | None, ...]:
        return (summary.regime_ms.get(self.name),)


class ProfiledRegime(Regime):
    """A regime measured in processes of its own, whose record is a kernel's
    entry in the comparison's ``profiles``: the summary fields it sets from
    that record, and the rule it judges a pair by."""

    @abc.abstractmethod
    def profile_fields(self, profile: Mapping[str, Any] | None) -> Mapping[str, object]:
        """Fields of ``KernelSummary`` this regime sets from a kernel's
        profile record (None: it had none)."""

    @abc.abstractmethod
    def judge(
        self, baseline: KernelSummary, other: KernelSummary, confidence: float, margin: float
    ) -> RegimeResult:
        """Its word on a pair of timed kernels, from their summaries."""


_REGISTRY: dict[str, Regime] = {}
R = TypeVar("R", bound=Regime)


def register(cls: type[R]) -> type[R]:
    """Register the regime ``cls`` defines (a class decorator, in its module)."""
    if cls.name in _REGISTRY or cls.name == PRIMARY:
        raise ValueError(f"regime {cls.name!r} is registered already")
    _REGISTRY[cls.name] = cls()
    return cls


def unregister(name: str) -> None:
    """Take the regime ``name`` out of the registry (a test's own regime)."""
    del _REGISTRY[name]


def registered() -> list[Regime]:
    """Every registered regime, in verdict order: those measured in the
    timing process, then those of processes of their own, each by rank (then name)."""
    return [*timed(), *profiled()]


def timed() -> list[TimingRegime]:
    """The registered regimes measured in the timing process, by rank (then name)."""
    return _by_rank(r for r in _REGISTRY.values() if isinstance(r, TimingRegime))


def profiled() -> list[ProfiledRegime]:
    """The registered regimes measured in processes of their own, by rank (then name)."""
    return _by_rank(r for r in _REGISTRY.values() if isinstance(r, ProfiledRegime))


def _by_rank(found: Iterable[R]) -> list[R]:
    return sorted(found, key=lambda r: (r.rank, r.name))


def process_regimes() -> tuple[str, ...]:
    """The regimes every timed process measures in paired rounds, primary
    first: the ones judged with an interval across processes by one rule."""
    return (PRIMARY, *(r.name for r in timed()))


def figures(summary: KernelSummary, among: Sequence[Regime]) -> list[tuple[Column, float | None]]:
    """Each column of the regimes ``among`` with ``summary``'s figure in it (None: none)."""
    return [pair for r in among for pair in zip(r.columns(), r.values(summary), strict=True)]


def columns(among: Sequence[Regime]) -> list[Column]:
    """The columns of the regimes ``among``, in their order."""
    return [column for r in among for column in r.columns()]


def notes(summary: KernelSummary) -> list[str]:
    """What every regime says of a timed kernel's row."""
    return [note for r in registered() for note in r.notes(summary)]


# Every regime_* module, each registering its regime: a new regime's module
# is found by its name, with no line here.
import_prefixed("gemmreg.timing", REGIME_MODULE_PREFIX)
