"""Rounds: how the kernels of one comparison share a worker process fairly.

A GPU's clock follows its power and temperature, and both follow the load:
kernels timed one after another, or for different lengths of time, run at
different clocks. So every kernel of a comparison is timed in the same
*rounds*. A round gives each kernel one slot of the same wall-clock budget
(equal exposure by construction), in an order that rotates from round to
round through a Williams Latin square: every kernel is first, last, and
after every other kernel equally often, so neither position nor the kernel
before it favours anyone. The square's rows are mapped through a
permutation seeded by the problem and the process, so runs replay.

Everything here is pure: the worker feeds it what it measured.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from gemmreg.contract.balanced_orders import williams_rows
from gemmreg.timing import stats


def order_seed(problem_label: str, process: int, seed: int) -> int:
    """A seed from the problem, the process and the run's seed (stable across
    Python runs, unlike ``hash``)."""
    return zlib.crc32(f"{problem_label}|{process}|{seed}".encode())


def round_orders(names: Sequence[str], rounds: int, seed: int) -> list[list[str]]:
    """The order of the kernels in each of ``rounds`` rounds."""
    items = list(names)
    random.Random(seed).shuffle(items)
    rows = williams_rows(len(items))
    start = random.Random(seed + 1).randrange(len(rows)) if rows else 0
    return [[items[i] for i in rows[(start + r) % len(rows)]] for r in range(rounds)]


@attrs.frozen(kw_only=True)
class Round:
    """One round as the worker measured it."""

    order: tuple[str, ...]
    slot_ms: Mapping[str, float]
    """Median sample of each kernel's slot."""
    slot_wall_s: Mapping[str, float]
    """Wall time each slot took: the exposure."""
    samples: Mapping[str, int]
    slot_host_ms: Mapping[str, float] = attrs.field(factory=dict)
    """The host's time per call in each kernel's slot (its launch path; the GPU
    only): the median over the slot's batches. Empty on the CPU."""
    readings: tuple[Mapping[str, Any], ...] = ()
    """Clock readings (gpu_monitor.Reading as dicts) at the start and end of the round."""
    dropped: str | None = None
    """Why the round does not count (throttled), or None."""


def kept(rounds: Sequence[Round]) -> list[Round]:
    return [r for r in rounds if r.dropped is None]


def log_ratios(rounds: Sequence[Round], baseline: str, other: str) -> list[float]:
    """Paired per-round log(t_baseline / t_other) over the rounds that count."""
    out = []
    for r in kept(rounds):
        b, o = r.slot_ms.get(baseline), r.slot_ms.get(other)
        if b and o and b > 0 and o > 0:
            out.append(math.log(b / o))
    return out


def process_estimate(rounds: Sequence[Round], baseline: str, other: str) -> float | None:
    """One process's paired log-ratio: the trimmed mean over its kept rounds."""
    ratios = log_ratios(rounds, baseline, other)
    return stats.trimmed_mean(ratios) if ratios else None


def _pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]


def widest_halfwidth(
    rounds: Sequence[Round], names: Sequence[str], confidence: float = stats.CONFIDENCE
) -> float:
    """The widest within-process interval half-width of any pair's mean
    log-ratio: sampling may stop when even the worst pair is narrow."""
    widths = [
        stats.trimmed_halfwidth(log_ratios(rounds, a, b), confidence) for a, b in _pairs(names)
    ]
    return max(widths, default=0.0)


TARGET_HALFWIDTH = 0.005
"""A process stops taking rounds once every pair's paired log-ratio is known
to +-0.5% (:attr:`StopRule.target_halfwidth`), unless a cap comes first."""
HARD_CAP_FACTOR = 10.0
"""A process that has not kept its minimum rounds stops at this many times the
time cap all the same (every round dropped: a throttling GPU)."""


@attrs.frozen(kw_only=True)
class StopRule:
    """When a process stops taking rounds. Every threshold is here."""

    min_rounds: int
    min_kernel_s: float
    """GPU (or CPU) time each kernel must have been timed for, at least."""
    max_rounds: int
    max_time_s: float
    target_halfwidth: float = TARGET_HALFWIDTH
    decisive_log_ratio: float = math.log(1.05)
    """A pair whose whole interval lies beyond +-5% (log scale) needs no
    +-0.5% precision: no verdict margin is that wide, so the pair's verdict
    cannot turn on it, and sampling on costs seconds per process (the seed
    pair, about 3x apart, took 35-111 rounds to reach +-0.5%). Identical or
    nearly equal kernels never meet this, so the A/A and known-difference
    calibrations are untouched by it."""
    decisive_halfwidth: float = 0.03
    """...but even a decisive pair is known to +-3% in each process before
    sampling stops, so its printed speedup (combined over the processes) is
    a figure worth reading. The seed pair took about 31 rounds to reach
    +-2% on the H200, about 3.5 s of its 35 s over five processes."""


def _decisive(ratios: Sequence[float], width: float, rule: StopRule) -> bool:
    """A pair's paired log-ratios (``width``: their half-width) decisively
    apart (:attr:`StopRule.decisive_log_ratio`) and known to
    ``rule.decisive_halfwidth``."""
    distance = abs(stats.trimmed_mean(ratios)) - width if ratios else 0.0
    return width <= rule.decisive_halfwidth and distance >= rule.decisive_log_ratio


def unsettled_halfwidth(rounds: Sequence[Round], names: Sequence[str], rule: StopRule) -> float:
    """The widest half-width among the pairs still worth sampling: a pair
    that is *decisively* apart (see :attr:`StopRule.decisive_log_ratio`)
    counts as settled once its half-width is within ``rule.decisive_halfwidth``."""
    widest = 0.0
    for a, b in _pairs(names):
        ratios = log_ratios(rounds, a, b)
        width = stats.trimmed_halfwidth(ratios)
        if width <= rule.target_halfwidth or _decisive(ratios, width, rule):
            continue
        widest = max(widest, width)
    return widest


def all_decisive(rounds: Sequence[Round], names: Sequence[str], rule: StopRule) -> bool:
    """Every pair decisively apart (:func:`_decisive`). Such a process needs
    no minimum of timed work either (:attr:`StopRule.min_kernel_s`): that
    minimum is there so that a close pair's figures cover more than a few
    milliseconds of clocks, and a pair 5% or more apart with a +-3% interval
    is not close. The seed pair (3x apart, a 16 us kernel) spent some 40 of
    its 73 rounds a process, about 1 s of each, reaching 50 ms of the short
    kernel's work after its verdict was plain."""
    pairs = _pairs(names)
    for a, b in pairs:
        ratios = log_ratios(rounds, a, b)
        if not ratios or not _decisive(ratios, stats.trimmed_halfwidth(ratios), rule):
            return False
    return bool(pairs)


def stop_reason(
    rounds: Sequence[Round], names: Sequence[str], rule: StopRule, elapsed_s: float
) -> str | None:
    """Why to stop now, or None to take another round."""
    good = kept(rounds)
    if len(rounds) >= rule.max_rounds:
        return f"round cap ({rule.max_rounds})"
    if len(good) < rule.min_rounds:
        # The minimum comes before the time cap (a loaded machine must not
        # stop a process after two rounds), up to a hard cap for a GPU whose
        # every round is dropped.
        if elapsed_s >= HARD_CAP_FACTOR * rule.max_time_s:
            return f"hard cap ({HARD_CAP_FACTOR:g} x {rule.max_time_s:g} s) before {rule.min_rounds} kept rounds"
        return None
    if elapsed_s >= rule.max_time_s:
        return f"time cap ({rule.max_time_s:g} s)"
    timed_s = {name: sum(r.slot_ms[name] * r.samples[name] for r in good) / 1e3 for name in names}
    if min(timed_s.values(), default=0.0) < rule.min_kernel_s and not all_decisive(
        good, names, rule
    ):
        return None
    if unsettled_halfwidth(good, names, rule) <= rule.target_halfwidth:
        width = widest_halfwidth(good, names)
        if width <= rule.target_halfwidth:
            return f"steady: paired ratio known to +-{width:.2%} after {len(good)} rounds"
        return (
            f"steady: every pair known to +-{rule.target_halfwidth:.1%} or decisively "
            f"apart (more than {math.expm1(rule.decisive_log_ratio):.0%}) after {len(good)} rounds"
        )
    return None


def exposure(rounds: Sequence[Round], names: Sequence[str]) -> dict[str, dict[str, float]]:
    """Samples and wall seconds each kernel was exposed for, over all rounds."""
    return {
        name: {
            "samples": sum(r.samples.get(name, 0) for r in rounds),
            "wall_s": sum(r.slot_wall_s.get(name, 0.0) for r in rounds),
        }
        for name in names
    }
