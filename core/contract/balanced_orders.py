"""The order in which interleaved timing runs its candidates: a Williams
design, public (``gemmreg.williams_rows``) so that a plugin's own tuner
ranks its candidates by the rule gemmreg's verdicts are taken by.

On a power-limited GPU a kernel's time depends on what ran just before it:
in H200 tunings of December 2026 a built-in plugin's tuner, whose old design timed
its first candidate right after its list's last and slowest one in every
forward round, picked that candidate 72 times in 76, and put its twin (a
byte-identical binary, second in the list) 3.5% slower at the median and up
to 7% (``evidence/2026-12-02-h200-tuner-order-bias/tuner-bias.txt``).
A Williams design puts every candidate first, last, and after every other
candidate equally often, so neither a position nor a predecessor favours
anyone (first-order carry-over balance).
"""

from __future__ import annotations


def williams_rows(n: int) -> list[list[int]]:
    """A Williams design for ``n`` items (``0 .. n-1``): ``n`` rows (``2n``
    when ``n`` is odd), each an order of all the items, in which each
    position holds each item equally often and each ordered pair of
    neighbours occurs equally often (first-order carry-over balance).
    Time one round per row, every candidate once in the row's order."""
    if n < 1:
        return []
    if n == 1:
        return [[0]]
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    rows = [[(item + shift) % n for item in first] for shift in range(n)]
    if n % 2:
        rows += [list(reversed(row)) for row in rows]
    return rows
