"""How the tuner times its candidates: one screening round, then interleaved
rounds in a Williams design, never one candidate after another.

Why interleaved: on a power-limited GPU (the H200) a kernel's time moves by
10-18% from one moment to the next, while the best candidates differ by one
or two percent. Timed one after the other, each candidate sees its own
clocks and the ranking follows them. At 8e21403 the tuner, timing each
candidate once for 100 ms, picked configs that ``gemmreg bench`` put 2.5%
behind cuBLAS at 4096^3 fp16 (``evidence/2026-12-01-h200-tuner-interleaved-rounds``).

Why a Williams design: a kernel's time also depends on what ran just before
it (most likely the clocks its predecessor left). Until December 2026 the
rounds came in forward-backward pairs, which keep each candidate's
neighbours: in every forward round the first candidate followed the list's
last and slowest one. It won 72 of 76 16-bit tunings on the H200,
and its twin, second in the list and the very same binary under Triton 3.6
(``ws`` compiles to nothing there), came out 3.5% slower at the median and
slower in 74 of the 76; the twins at places 4 and 5 came out level (-0.2%)
(``evidence/2026-12-02-h200-tuner-order-bias/tuner-bias.txt``,
``same-binary.txt``). :func:`gemmreg.williams_rows`, the design of gemmreg's
own rounds, puts every candidate first, last, and after every other
candidate equally often inside the rounds; a round's first candidate runs
once more just before it (that time discarded), so that across the boundary
it follows itself, not whatever ended the round before.

Why screening: a candidate far behind the fastest cannot win, and being cool
it lends the next one clocks. Screening times every candidate twice, in the
list's order and then in reverse, after a discarded lead-in call, and drops
those whose geometric mean is over :data:`SCREEN_RATIO` times the fastest's;
only the rest are ranked, so they are also ranked sooner. Screening used to
be one pass in list order, right after the candidates were compiled and
checked (seconds of an idle, cooling GPU): on the H200 the first candidate
then screened 2-13% faster than the rest against their ranking scores
(first/others 0.87-0.98 over the eight tunings of
``evidence/2026-12-02-h200-tuner-screening-bias/screen-bias.txt``), and ranked 6th to
8th at the six points over 4096^3. A 15% cut from a time that low dropped
candidates at 1.151-1.176 times it, one of them a form that won the ranking
at another of those shapes. The lead-in takes the cold start; the
two passes give every candidate the same place on average in a drift across
the screening.

A candidate's score is its log-time against the mean of its round (the
clocks then), averaged over the rounds: a mean, over which the design's
balance holds (a median over rounds would undo it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import gemmreg

MIN_ROUNDS = 6
"""Ranking rounds at least: whole passes through the design's rows (``n`` of
them for ``n`` candidates, ``2n`` when ``n`` is odd), repeated until there are
this many."""
SCREEN_RATIO = 1.15
"""A candidate whose screening time is over this many times the fastest's is
not ranked. Wide: two calls each (in opposite orders) still carry much of
what the ranking rounds are there to remove (up to 7% between two twins)."""


def schedule(count: int) -> list[list[int]]:
    """The order of ``count`` candidates (their indices) in each ranking round:
    the rows of :func:`gemmreg.williams_rows`, in whole passes, at least
    :data:`MIN_ROUNDS` of them."""
    rows = gemmreg.williams_rows(count)
    if not rows:
        return [[] for _ in range(MIN_ROUNDS)]
    passes = -(-MIN_ROUNDS // len(rows))
    return [list(row) for _ in range(passes) for row in rows]


def contenders(screened_ms: Mapping[str, float]) -> list[str]:
    """The candidates worth ranking, in their order: within :data:`SCREEN_RATIO`
    of the fastest screening time."""
    if not screened_ms:
        return []
    fastest = min(screened_ms.values())
    return [name for name, ms in screened_ms.items() if ms <= SCREEN_RATIO * fastest]


def scores(samples: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Each candidate's time under the rounds' common conditions (ms).

    ``samples[name][r]`` is the candidate's time in round ``r`` of
    :func:`schedule`; every candidate must have one for every round. In each
    round a time is taken against the geometric mean of that round's times;
    a candidate's score is the mean of those log-ratios over the rounds, given
    back in milliseconds (the geometric mean of every sample times
    ``exp(score)``), so the lowest is the winner.
    """
    names = list(samples)
    if not names:
        return {}
    counts = {len(samples[name]) for name in names}
    if len(counts) != 1 or 0 in counts:
        raise ValueError(f"every candidate needs one time per round: {sorted(counts)}")
    (count,) = counts
    logs = {name: [math.log(t) for t in samples[name]] for name in names}
    centres = [statistics.fmean(logs[name][r] for name in names) for r in range(count)]
    grand = statistics.fmean(centres)
    return {
        name: math.exp(grand + statistics.fmean(logs[name][r] - centres[r] for r in range(count)))
        for name in names
    }


def describe(error: BaseException) -> str:
    """An error as the reason a candidate was skipped: its class and message, at most 300 characters."""
    text = f"{type(error).__name__}: {error}".strip()
    return text if len(text) <= 300 else text[:297] + "..."


def measure(
    benchmark: Callable[[Callable[[], None]], float],
    run: Callable[[], None],
    name: str,
    skipped: dict[str, str],
) -> float | None:
    """One measurement of ``run`` (ms), or None with the reason in ``skipped``."""
    try:
        ms = float(benchmark(run))
    except Exception as error:
        skipped[name] = describe(error)
        return None
    if not math.isfinite(ms) or ms <= 0:
        skipped[name] = f"benchmark returned {ms!r} ms"
        return None
    return ms


def _timed_round(
    order: Sequence[str],
    runs: Mapping[str, Callable[[], None]],
    benchmark: Callable[[Callable[[], None]], float],
    skipped: dict[str, str],
    samples: dict[str, list[float]],
) -> None:
    """One call of each candidate in ``order`` not skipped, its time added to
    ``samples``, after a lead-in call of the first of them (time discarded):
    in a ranking round the first candidate then follows itself, and every
    predecessor pair stays balanced across rounds; in screening the lead-in
    takes the cold start."""
    lead = next((name for name in order if name not in skipped), None)
    if lead is not None:
        measure(benchmark, runs[lead], lead, skipped)
    for name in order:
        if name in skipped:
            continue
        ms = measure(benchmark, runs[name], name, skipped)
        if ms is not None:
            samples[name].append(ms)


def screen(
    runs: Mapping[str, Callable[[], None]],
    benchmark: Callable[[Callable[[], None]], float],
    skipped: dict[str, str],
) -> dict[str, float]:
    """Each candidate's screening time (ms): the geometric mean of one call in
    the list's order and one in reverse, after a lead-in call of the first
    candidate whose time is discarded (the module's docstring says why)."""
    names = list(runs)
    passes: dict[str, list[float]] = {name: [] for name in names}
    _timed_round(names + names[::-1], runs, benchmark, skipped, passes)
    return {
        name: math.sqrt(times[0] * times[1])
        for name, times in passes.items()
        if name not in skipped and len(times) == 2
    }


class Ranking(NamedTuple):
    screened: dict[str, float]
    """Every candidate's screening time (:func:`screen`)."""
    scores: dict[str, float]
    """The contenders' scores (:func:`scores`), in the candidates' order."""
    rounds: dict[str, list[float]]
    """Each ranked contender's time in every round, round ``r`` at index ``r``
    (empty where fewer than two were ranked; none for a contender that failed
    in the rounds)."""


def rank(
    runs: Mapping[str, Callable[[], None]],
    benchmark: Callable[[Callable[[], None]], float],
    skipped: dict[str, str],
) -> Ranking:
    """Screen ``runs`` (compiled and checked, in the candidates' order) with
    :func:`screen`, then rank the contenders in the rounds of :func:`schedule`.
    A candidate that fails is left out with its reason in ``skipped``."""
    screened = screen(runs, benchmark, skipped)
    names = contenders(screened)
    if len(names) < 2:  # one contender: nothing to rank it against
        return Ranking(screened, {name: screened[name] for name in names}, {})
    samples: dict[str, list[float]] = {name: [] for name in names}
    for order in schedule(len(names)):
        _timed_round([names[i] for i in order], runs, benchmark, skipped, samples)
    ranked = {n: t for n, t in samples.items() if n not in skipped}
    # In the candidates' order, so ``min`` gives ties to the earlier candidate.
    return Ranking(screened, scores(ranked), ranked)


def head_to_head(
    rounds: Mapping[str, Sequence[float]], first: str, second: str
) -> dict[str, Any] | None:
    """How ``first`` fared against ``second`` round by round: the rounds in
    which it was the faster, of the rounds both ran, and the median over
    those rounds of ``second``'s time over its own (above 1: ``first``
    ahead). None where the two share no round.

    Why: a score is a mean over the rounds, and the winner's lead over the
    runner-up can be smaller than the rounds' own scatter. Where it led in
    about half the rounds the pick is a coin toss, and another tuning (a
    second machine, a later run) may pick the other form: the benches that
    follow then judge two different kernels. On an H100 at 8192x14336x4096
    fp16 the tuner took a persistent form 0.07% ahead of the Gluon one, and
    the bench put the point SLOWER (0.9845x); on another H100 the tuner had
    taken the Gluon form there and the point was FASTER (1.01x)
    (``evidence/2026-12-07-h100-llm-bf16-20-points-fp16-large-and-6-stage-check``).
    The record says how close each pick was."""
    pairs = list(zip(rounds.get(first, ()), rounds.get(second, ()), strict=False))
    if not pairs:
        return None
    return {
        "runner_up": second,
        "rounds_won": sum(mine < theirs for mine, theirs in pairs),
        "rounds": len(pairs),
        "median_lead": round(statistics.median(theirs / mine for mine, theirs in pairs), 4),
    }


def lead(
    best: str, standing: Sequence[str], rounds: Mapping[str, Sequence[float]]
) -> dict[str, Any] | None:
    """``best`` against the next candidate below it in ``standing`` (the
    tuner's order of preference) that has rounds (:attr:`Ranking.rounds`:
    one that failed in them has none) (:func:`head_to_head`); None where
    there is none."""
    below = standing[standing.index(best) + 1 :]
    runner = next((name for name in below if name in rounds), None)
    return None if runner is None else head_to_head(rounds, best, runner)
