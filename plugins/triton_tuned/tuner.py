"""Choosing a config: from the cache, by rule, or by benchmarking candidates.

Everything here runs inside ``prepare``, which the core times as cold start
(``prepare_s``), never inside the timed region. The tuning itself is written
against three injected functions (``build``, ``verify``, ``benchmark``) so the
tests can drive it with fake kernels and a fake clock; ``device_trial`` makes
the real ones for a GPU.

For every candidate the tuner builds the launch, calls it once (Triton compiles
on that call, so compile time never enters the ranking), checks what it wrote,
then benchmarks it. A candidate that fails to compile, raises, or writes a
wrong C is skipped, with the reason kept in the cache entry.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import attrs
import gemmreg
from gemmreg_plugins.triton_tuned import tuning_cache
from gemmreg_plugins.triton_tuned.configs import Config, smallest

if TYPE_CHECKING:
    import torch
    from gemmreg_plugins.triton_tuned.launchers import Launcher

Run = Callable[[], None]

Origin = Literal["cache", "tuned", "rule", "untuned"]


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

    def entry(self) -> dict[str, Any]:
        """The cache entry: the choice, and the evidence it was made on."""
        return {
            "best": self.best.to_dict(),
            "fallback": self.fallback.to_dict(),
            "timings_ms": self.timings_ms,
            "skipped": self.skipped,
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
    skipped: dict[str, str]


def _describe(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    return text if len(text) <= 300 else text[:297] + "..."


def tune(candidates: Sequence[Config], trial: Trial) -> Result:
    """Benchmark every candidate; the fastest that runs and is right wins (ties
    go to the earlier candidate)."""
    timings: dict[str, float] = {}
    skipped: dict[str, str] = {}
    best: Config | None = None
    for config in candidates:
        try:
            run = trial.build(config)
            run()  # compiles: kept out of the timing below
            wrong = trial.verify()
            if wrong:
                skipped[config.name] = f"wrong result: {wrong}"
                continue
            ms = float(trial.benchmark(run))
        except Exception as error:
            skipped[config.name] = _describe(error)
            continue
        if not math.isfinite(ms) or ms <= 0:
            skipped[config.name] = f"benchmark returned {ms!r} ms"
            continue
        timings[config.name] = ms
        if best is None or ms < timings[best.name]:
            best = config
    while best is not None and (wrong := _recheck(best, trial)):
        skipped[best.name] = f"wrong result on a re-run: {wrong}"
        del timings[best.name]
        by_name = {config.name: config for config in candidates}
        best = by_name[min(timings, key=timings.__getitem__)] if timings else None
    if best is None:
        reasons = "; ".join(f"{name}: {why}" for name, why in skipped.items())
        raise TuningFailed(f"no candidate config ran: {reasons or 'no candidates'}")
    return Result(best=best, timings_ms=timings, skipped=skipped)


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
        return _describe(error)
    return None


def fallback_of(candidates: Sequence[Config], timings_ms: dict[str, float]) -> Config:
    """The tiled config used where TMA cannot go: the fastest tiled candidate
    timed, else the rule's pick among the tiled candidates."""
    tiled = [c for c in candidates if c.path == "tiled"]
    if not tiled:
        raise ValueError("the candidates hold no tiled config to fall back on")
    timed = [c for c in tiled if c.name in timings_ms]
    if timed:
        return min(timed, key=lambda c: timings_ms[c.name])
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
        fallback=fallback_of(candidates, result.timings_ms),
        origin="tuned",
        timings_ms=result.timings_ms,
        skipped=result.skipped,
        tune_s=time.perf_counter() - start,
    )
    if key is not None:
        tuning_cache.store(key, choice.entry(), cache_file)
    return choice


# ---------------------------------------------------------------------------
# The real trial, on a GPU
# ---------------------------------------------------------------------------

VERIFY_ROWS = 256
"""Rows of C checked after each candidate's first call (spread over M, the
last included): enough to catch a miscompiled tile, cheap at any M."""
VERIFY_RTOL = 1e-2
"""Of |A|@|B|: above every dtype's honest rounding (TF32 ~2e-3, bf16 C ~4e-3),
far below what a wrong tile gives."""
BENCH_WARMUP_MS = 25
BENCH_REP_MS = 100


@attrs.frozen(kw_only=True)
class DeviceTrial:
    """Operands of one problem's shape, dtype and layout on the GPU, and the
    three functions :func:`tune` needs."""

    a: Any
    b: Any
    out: Any
    make_launch: Callable[[Config], Launcher]
    reference: dict[str, Any] = attrs.field(factory=dict)
    """Rows checked, and their float64 reference and bound, made on first use."""

    def build(self, config: Config) -> Run:
        launch = self.make_launch(config)
        a, b, out = self.a, self.b, self.out
        out.fill_(float("nan"))  # a tile left unwritten shows as NaN in verify

        def run() -> None:
            launch(a, b, out)

        return run

    def verify(self) -> str | None:
        import torch

        if self.out.is_cuda:
            torch.cuda.synchronize()  # a launch's asynchronous error surfaces here, in its try
        if not bool(torch.isfinite(self.out).all()):
            return "non-finite values in C (an unwritten tile?)"
        if "ref" not in self.reference:  # the same for every candidate: computed once
            m = self.a.shape[0]
            spread = torch.linspace(0, m - 1, min(m, VERIFY_ROWS), device=self.a.device)
            last = torch.tensor([m - 1], device=self.a.device)
            rows = torch.unique(torch.cat([spread.long(), last]))
            a_rows, b = self.a[rows].double(), self.b.double()
            self.reference["rows"] = rows
            self.reference["ref"] = a_rows @ b
            self.reference["bound"] = VERIFY_RTOL * (a_rows.abs() @ b.abs()) + 1e-6
        got = self.out[self.reference["rows"]].double()
        bad = int(((got - self.reference["ref"]).abs() > self.reference["bound"]).sum())
        if bad:
            return f"{bad} of {got.numel()} checked elements off by > {VERIFY_RTOL:g} of |A|@|B|"
        return None

    def benchmark(self, run: Run) -> float:
        import triton.testing

        return float(
            triton.testing.do_bench(
                run, warmup=BENCH_WARMUP_MS, rep=BENCH_REP_MS, return_mode="median"
            )
        )


def device_trial(
    m: int,
    n: int,
    k: int,
    dtype: torch.dtype,
    layout: str,
    make_launch: Callable[[Config], Launcher],
    device: str = "cuda",
) -> DeviceTrial:
    """Random normal operands (never zeros: those run faster than real data on
    power-limited GPUs), laid out as the core will lay them out."""
    import torch

    generator = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(m, k, device=device, generator=generator).to(dtype)
    b = torch.randn(k, n, device=device, generator=generator).to(dtype)
    a, b = gemmreg.apply_layout(a, b, layout)
    out = torch.empty(m, n, device=device, dtype=dtype)
    return DeviceTrial(a=a, b=b, out=out, make_launch=make_launch)
