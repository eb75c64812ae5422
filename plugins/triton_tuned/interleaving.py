"""How the tuner times its candidates: in interleaved rounds, never one after
another.

Why: on a power-limited GPU (the H200) a kernel's time moves by 10-18% from
one moment to the next, while the best candidates differ by one or two
percent. Timed one after the other, each candidate sees its own clocks and
the ranking follows them. At 8e21403 the tuner, timing each candidate once
for 100 ms, picked configs that ``gemmreg bench`` put 2.5% behind cuBLAS at
4096^3 fp16; an interleaved probe of the same list ran other configs level
with cuBLAS there (``evidence/2026-12-01-h200-session13/c2/interleave.log``),
and with this tuner the verdict became EQUIVALENT, twice (``c3``, ``c5``).
gemmreg's own verdicts rest on the same rule: only samples taken side by
side compare.

So every round times every candidate once, and a candidate's score is its
time against the round's average. The rounds come in pairs, forward then
backward (an ABBA design), so a clock that drifts steadily through a pair
costs every candidate the same; each pair starts at another offset, so no
candidate always runs first or next to the same neighbour; and the score is
the median over the pairs, so a sudden change of clocks inside one pair is
outvoted by the others.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

ROUNDS = 6
"""Three forward-backward pairs: three offsets of the order."""


def schedule(count: int, rounds: int = ROUNDS) -> list[list[int]]:
    """The order of ``count`` candidates (their indices) in each round.

    Round ``2p`` runs them forward from offset ``p * count // pairs``, round
    ``2p + 1`` the same order backward: over a pair every candidate's mean
    position is the same, so a linear drift in time adds the same to all.
    """
    if count <= 0:
        return [[] for _ in range(rounds)]
    pairs = max(1, (rounds + 1) // 2)
    orders = []
    for r in range(rounds):
        offset = (r // 2) * count // pairs
        order = [(offset + i) % count for i in range(count)]
        orders.append(order if r % 2 == 0 else order[::-1])
    return orders


def scores(samples: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Each candidate's time under the rounds' common conditions (ms).

    ``samples[name][r]`` is the candidate's time in round ``r`` of
    :func:`schedule`; every candidate must have one for every round. In each
    round a time is taken against the geometric mean of that round's times
    (the clocks' state then). A pair of rounds, forward and backward, gives the
    mean of its two log-ratios, in which a steady drift cancels; the score is
    the median over the pairs, so one pair that a sudden change of clocks
    caught does not decide. It is given back in milliseconds (the geometric
    mean of every sample times ``exp(score)``), so the lowest is the winner.
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
    pairs = [range(start, min(start + 2, count)) for start in range(0, count, 2)]
    relative = {
        name: statistics.median(
            statistics.fmean(logs[name][r] - centres[r] for r in pair) for pair in pairs
        )
        for name in names
    }
    return {name: math.exp(grand + relative[name]) for name in names}
