"""Choosing a config: from the cache, by rule, or by benchmarking candidates.

Everything here runs inside ``prepare``, which the core times as cold start
(``prepare_s``), never inside the timed region. The tuning itself is written
against three injected functions (``build``, ``verify``, ``benchmark``) so the
tests can drive it with fake kernels and a fake clock; ``device_trial`` makes
the real ones for a GPU (:mod:`.device_trial`).

For every candidate the tuner builds the launch, calls it once (Triton compiles
on that call, so compile time never enters the ranking) and checks what it
wrote. A candidate that fails to compile, raises, or writes a wrong C is
skipped, with the reason kept in the cache entry. A candidate that compiled
to the binary of an earlier one is not timed again. The rest are screened
(two calls each, in opposite orders) and the contenders ranked in interleaved rounds
(:mod:`.interleaving`): each round times every one of them once, in a
Williams design, so a clock that moves while the tuner runs, or the clocks
a predecessor leaves, move every candidate's time alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import attrs
from gemmreg_plugins.triton_tuned import interleaving, tuning_cache
from gemmreg_plugins.triton_tuned.configs import Config, smallest

Run = Callable[[], None]

Origin = Literal["cache", "tuned", "rule", "untuned", "forced"]


class Trial(Protocol):
    """Operands of one problem, and how to run, check and time a candidate on them."""

    def build(self, config: Config) -> Run:
        """One candidate's call on the trial's operands (its first call compiles)."""
        ...

    def verify(self) -> str | None:
        """After a call: why the output is wrong, or None."""
        ...

    def benchmark(self, run: Run) -> float:
        """Milliseconds per call of an already compiled ``run`` (lower is better)."""
        ...


# A trial may also have ``binary(config) -> str | None``: a digest of the
# binary ``config`` compiled to (after its first call), so that candidates
# whose configs differ and whose code does not are timed once
# (``device_trial.DeviceTrial.binary``), and ``clock_note() -> str``: how its
# clock queued the samples (``gemmreg.clock_note``), kept in the entry. Read
# with ``getattr``: the fakes of the tests and a trial that cannot tell need
# not have them.


class TuningFailed(RuntimeError):
    """Every candidate failed; the message lists why, per candidate."""


@attrs.frozen(kw_only=True)
class Choice:
    """What ``prepare`` launches: ``best``, and the tiled ``fallback`` used when
    a launch's operands cannot go through TMA."""

    best: Config
    fallback: Config
    origin: Origin
    timings_ms: dict[str, float] = attrs.field(factory=dict)
    skipped: dict[str, str] = attrs.field(factory=dict)
    tune_s: float = 0.0
    screened_ms: dict[str, float] = attrs.field(factory=dict)
    same_binary: dict[str, str] = attrs.field(factory=dict)
    clock: str = ""
    """How the tuning's clock queued its samples: '' where every batch was
    held (:attr:`Result.clock`)."""
    lead: dict[str, Any] | None = None
    """The pick against the runner-up, round by round (:attr:`Result.lead`)."""

    def entry(self) -> dict[str, Any]:
        """The cache entry: the choice, and the evidence it was made on."""
        return {
            "best": self.best.to_dict(),
            "fallback": self.fallback.to_dict(),
            "timings_ms": self.timings_ms,
            "screened_ms": self.screened_ms,
            "same_binary": self.same_binary,
            "skipped": self.skipped,
            "clock": self.clock,
            "lead": self.lead,
            "tune_s": round(self.tune_s, 3),
            "tuned_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> Choice:
        """Raises ``ValueError``/``TypeError``/``KeyError`` on an entry that is
        not one of ours."""
        fallback = Config.from_dict(entry["fallback"])
        if fallback.path != "tiled":
            raise ValueError("the fallback must be a tiled config")
        return cls(best=Config.from_dict(entry["best"]), fallback=fallback, origin="cache")


@attrs.frozen(kw_only=True)
class Result:
    """One tuning run: the winner, every time measured, every candidate skipped."""

    best: Config
    timings_ms: dict[str, float]
    """The contenders' scores (:func:`interleaving.scores`)."""
    skipped: dict[str, str]
    screened_ms: dict[str, float] = attrs.field(factory=dict)
    """Every candidate's screening time (:func:`interleaving.screen`)."""
    same_binary: dict[str, str] = attrs.field(factory=dict)
    """Candidate -> the earlier candidate with its binary (timed once, as that one)."""
    clock: str = ""
    """The trial's ``clock_note()`` after the ranking: '' where every batch was
    held; else the batches taken again or why they were led by a spin, where a
    candidate's launch path can show in its figures (a pick to distrust)."""
    lead: dict[str, Any] | None = None
    """The pick against the next contender down, in the rounds both ran
    (:func:`interleaving.head_to_head`: rounds won, of how many, and the
    median lead); None where nothing was ranked beside it."""


def tune(candidates: Sequence[Config], trial: Trial) -> Result:
    """Check every candidate, screen the right ones (:func:`interleaving.screen`), rank the
    contenders in interleaved rounds (:mod:`.interleaving`); the fastest under
    the rounds' common conditions wins (ties go to the earlier candidate).
    A candidate whose binary another one already has (``trial.binary``, where
    the trial can tell) is not timed again: :attr:`Result.same_binary`."""
    skipped: dict[str, str] = {}
    runs: dict[str, Run] = {}
    same: dict[str, str] = {}
    binaries: dict[str, str] = {}
    for config in candidates:
        try:
            run = trial.build(config)
            run()  # compiles: kept out of the timing below
            wrong = trial.verify()
        except Exception as error:
            skipped[config.name] = interleaving.describe(error)
            continue
        if wrong:
            skipped[config.name] = f"wrong result: {wrong}"
            continue
        digest = _binary(trial, config)
        if digest is not None and digest in binaries:
            same[config.name] = binaries[digest]
            continue
        if digest is not None:
            binaries[digest] = config.name
        runs[config.name] = run
    ranking = interleaving.rank(runs, trial.benchmark, skipped)
    screened, timings = ranking.screened, ranking.scores
    by_name = {config.name: config for config in candidates}
    # The contenders by score (a stable sort: ties to the earlier candidate),
    # then the screened-out ones by their screening time: a winner wrong on a
    # re-run gives way to the next one down.
    standing = sorted(timings, key=timings.__getitem__) + sorted(
        (n for n in screened if n not in timings and n not in skipped), key=screened.__getitem__
    )
    best = None
    for name in standing:
        wrong = _recheck(by_name[name], trial)
        if not wrong:
            best = by_name[name]
            break
        skipped[name] = f"wrong result on a re-run: {wrong}"
        timings.pop(name, None)
    if best is None:
        reasons = "; ".join(f"{name}: {why}" for name, why in skipped.items())
        raise TuningFailed(f"no candidate config ran: {reasons or 'no candidates'}")
    note = getattr(trial, "clock_note", None)
    return Result(
        best=best,
        timings_ms=timings,
        skipped=skipped,
        screened_ms=screened,
        same_binary=same,
        clock=note() if note is not None else "",
        lead=interleaving.lead(best.name, standing, ranking.rounds),
    )


def _binary(trial: Trial, config: Config) -> str | None:
    """What ``trial.binary`` says ``config`` compiled to, or None where the
    trial cannot tell (the interpreter, a fake, a Triton that does not say)."""
    binary = getattr(trial, "binary", None)
    if binary is None:
        return None
    try:
        digest = binary(config)
    except Exception:  # identity is an economy, never a reason to fail
        return None
    return digest if isinstance(digest, str) and digest else None


RECHECK_CALLS = 16
"""The winner's C is checked on this many more calls, each into a NaN-filled C,
before it is chosen. A kernel that races is wrong on some calls only: on the
H200 one arrangement of the swapped TF32 loop was wrong on about 1 call in 4
(``plugins/triton_tuned/README.md``), which one check misses 3 times in 4 and
17 checks miss about 1 time in 130."""


def _recheck(config: Config, trial: Trial) -> str | None:
    """Why ``config`` computed a wrong C on one of ``RECHECK_CALLS`` calls, or None."""
    try:
        for _ in range(RECHECK_CALLS):
            trial.build(config)()
            wrong = trial.verify()
            if wrong:
                return wrong
    except Exception as error:
        return interleaving.describe(error)
    return None


def fallback_of(
    candidates: Sequence[Config],
    timings_ms: dict[str, float],
    screened_ms: dict[str, float] | None = None,
) -> Config:
    """The tiled config used where TMA cannot go: the fastest tiled candidate
    ranked, else the fastest screened (the tiled ones are often screened out
    where TMA runs), else the rule's pick among the tiled candidates."""
    tiled = [c for c in candidates if c.path == "tiled"]
    if not tiled:
        raise ValueError("the candidates hold no tiled config to fall back on")
    for times in (timings_ms, screened_ms or {}):
        timed = [c for c in tiled if c.name in times]
        if timed:
            return min(timed, key=lambda c: times[c.name])
    return smallest(tiled)


def choose(
    candidates: Sequence[Config],
    key: tuning_cache.CacheKey | None,
    make_trial: Callable[[], Trial],
    volume: int,
    tune_min_volume: int = 0,
    cache_file: Path | None = None,
    only: str | None = None,
    benchmark: bool = True,
) -> Choice:
    """The config for one problem.

    A cache hit returns at once and benchmarks nothing. A problem whose
    ``volume`` (M*N*K) is under ``tune_min_volume`` is launch-bound: the rule
    picks the smallest tiled tile, nothing is benchmarked or stored. Otherwise
    ``make_trial()`` makes the operands (only now: a hit allocates nothing), the
    candidates are tuned and the choice is stored under ``key``. ``only`` names
    a path to tune over alone, where it has candidates (the tiled ones still
    give the fallback). With ``benchmark`` False nothing is tuned: a stored
    choice, else the first candidate (of ``only``'s path, if it has any).
    """
    tiled = [c for c in candidates if c.path == "tiled"]
    if not tiled:
        raise ValueError("the candidates hold no tiled config")
    if volume < tune_min_volume or len(candidates) == 1:
        rule = smallest(tiled)
        return Choice(best=rule, fallback=rule, origin="rule")
    if key is not None:
        entry = tuning_cache.lookup(key, cache_file)
        if entry is not None:
            try:
                return Choice.from_entry(entry)
            except (KeyError, TypeError, ValueError):
                pass  # not an entry we can use: tune again and overwrite it
    tuned = [c for c in candidates if c.path == only] or list(candidates)
    if not benchmark:
        return Choice(best=tuned[0], fallback=smallest(tiled), origin="untuned")
    start = time.perf_counter()
    result = tune(tuned, make_trial())
    choice = Choice(
        best=result.best,
        fallback=fallback_of(candidates, result.timings_ms, result.screened_ms),
        origin="tuned",
        timings_ms=result.timings_ms,
        skipped=result.skipped,
        tune_s=time.perf_counter() - start,
        screened_ms=result.screened_ms,
        same_binary=result.same_binary,
        clock=result.clock,
        lead=result.lead,
    )
    if key is not None:
        tuning_cache.store(key, choice.entry(), cache_file)
        record = tuning_cache.record_path()
        if record is not None:
            tuning_cache.store(key, choice.entry(), record)
    return choice
