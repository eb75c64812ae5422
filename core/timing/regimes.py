"""The timing regimes measured beside the primary one: a registry, one
regime per module ``gemmreg.timing.regime_<name>``, which registers it.

The primary regime, end to end (the whole call, events, a cold L2), is the
rounds every timing process takes (:mod:`gemmreg.timing.round_loops`); a
verdict is its word. A regime registered here is measured after those rounds,
in the same process, on a GPU, and from then on everything that carries it is
generic, so a new regime is its module (plus its test):

- its **measurement**: :meth:`TimingRegime.measure`, rounds of its own, which the
  process hands back by regime name (``RoundsResult.regime_rounds``);
- its **figures**: a process's figure for each kernel
  (:meth:`TimingRegime.process_figure`, kept in ``ProcessRun.regime_ms``) and
  their summary across processes (:meth:`TimingRegime.summary_figure`, in
  ``KernelSummary.regime_ms``), with any label it sets on the summary;
- its **verdict**: each process's paired log-ratio of every pair in its rounds
  (``ProcessRecord.log_ratios[name]``), judged across processes as the primary
  regime is, listed after it by :attr:`TimingRegime.rank`;
- its **report**: a column in ``compare``'s table and in the summary rows
  (CSV), its notes and its lines of the legend.

The device-kernel regime (CUPTI, from processes of its own) is judged apart,
after these (:mod:`gemmreg.timing.device_regime`).
"""

from __future__ import annotations

import abc
import importlib
import pkgutil
import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeVar

if TYPE_CHECKING:
    from gemmreg.contract.records import Problem
    from gemmreg.timing.rounds import Round
    from gemmreg.timing.timed_kernel import TimedKernel
    from gemmreg.timing.timing_options import Policy
    from gemmreg.timing.timing_records import KernelSummary

PRIMARY = "end-to-end"
"""The regime a verdict's word and speedup are judged in."""
REGIME_MODULE_PREFIX = "regime_"
"""A module of :mod:`gemmreg.timing` named so defines (and registers) a regime."""


class TimingRegime(abc.ABC):
    """One regime measured beside the primary one: how it is measured, what
    it records, and how a report shows it."""

    name: ClassVar[str]
    """Its word in verdicts, and its key in the records (``regime_ms``, ``log_ratios``)."""
    rank: ClassVar[int] = 100
    """Its place after the primary regime: in verdicts, and in the tables' columns."""
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

    def notes(self, summary: KernelSummary) -> list[str]:
        """What a timed kernel's row says of it in this regime (notes column)."""
        return []

    def legend(self) -> list[str]:
        """Its lines of ``compare``'s legend, from the constants in force."""
        return []


_REGISTRY: dict[str, TimingRegime] = {}
R = TypeVar("R", bound=TimingRegime)


def register(cls: type[R]) -> type[R]:
    """Register the regime ``cls`` defines (a class decorator, in its module)."""
    if cls.name in _REGISTRY or cls.name == PRIMARY:
        raise ValueError(f"regime {cls.name!r} is registered already")
    _REGISTRY[cls.name] = cls()
    return cls


def unregister(name: str) -> None:
    """Take the regime ``name`` out of the registry (a test's own regime)."""
    del _REGISTRY[name]


def registered() -> list[TimingRegime]:
    """The registered regimes, by rank (then name)."""
    return sorted(_REGISTRY.values(), key=lambda r: (r.rank, r.name))


def process_regimes() -> tuple[str, ...]:
    """The regimes every timed process measures in paired rounds, primary
    first: the ones judged with an interval across processes."""
    return (PRIMARY, *(r.name for r in registered()))


def figures(summary: KernelSummary) -> list[tuple[TimingRegime, float | None]]:
    """Each registered regime with ``summary``'s figure in it (None: none)."""
    return [(r, summary.regime_ms.get(r.name)) for r in registered()]


def notes(summary: KernelSummary) -> list[str]:
    """What every regime says of a timed kernel's row."""
    return [note for r in registered() for note in r.notes(summary)]


def _load_regimes() -> None:
    """Import every ``regime_*`` module of this package, each registering its
    regime: a new regime's module is found by its name, with no line here.
    Run once, as this module is imported."""
    package = importlib.import_module("gemmreg.timing")
    for found in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if found.name.startswith(REGIME_MODULE_PREFIX):
            importlib.import_module(f"{package.__name__}.{found.name}")


_load_regimes()
