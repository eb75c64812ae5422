"""Sequential verdicts: processes added in batches until every pair is decided.

A fixed number of processes leaves a pair INCONCLUSIVE whenever its spread
between processes is too wide for that number, and rerunning with more
until a claim appears would make false claims. A *sequential* run looks at
the verdicts after each batch of processes (a *look*) and stops a pair once
it is decided, with its error rate controlled across every look it took.

The method is **alpha spending over an open-ended number of looks with the
Basel sequence**: look ``j`` (1, 2, ...) is judged at the error level
``alpha_j = alpha * 6 / (pi^2 j^2)``, whose sum over every ``j`` is exactly
``alpha`` (the sum of ``1 / j^2`` is ``pi^2 / 6``). By the union bound the
chance that a pair's interval ever misses the truth, at whichever look, is at
most ``alpha``, so a false claim (FASTER or SLOWER for kernels whose true
ratio is 1) and a false EQUIVALENT (an interval inside the margin whose
true ratio is outside it) each stay under ``alpha`` however many looks a run
takes, and whatever the number of processes at each look. Bonferroni across
a comparison's pairs divides each look's level as before. Why this one: a
budget in seconds does not fix the number of looks in advance (the
processes' own time does), and a spending function over a known maximum
(Lan-DeMets O'Brien-Fleming) would need it; this sequence needs nothing but
the look's index, and spends most at the first looks, where a clear
difference is decided in the first batch (look 1 at 0.61 alpha).

A pair is decided at the first look whose word is not INCONCLUSIVE
(FASTER, SLOWER, EQUIVALENT, or INVALID / NO VERDICT, which the judging
gives whatever the count); its word, interval, confidence and process count
are that look's, and it says so. Later processes do not move it.

Batches double (3, then 3 more, 6, 12, ...): every worker of a batch starts at
once and its start-up overlaps the others', so one more start-up wait per
batch, and doubling keeps the looks few (so each look's level stays
high: the 4th look, at 24 processes, is still judged at 0.068 alpha).
"""

from __future__ import annotations

import math

from gemmreg.contract import numbers
from gemmreg.timing import stats

FIRST_BATCH = stats.MIN_PROCESSES
"""Processes before the first look: the fewest that give an interval. A
difference as clear as 3x is decided there, on the first look, so a plain
``compare`` of two unlike kernels runs 3 processes instead of 5."""
MAX_PROCESSES = 48
"""The most processes a sequential look adds up to (3, 6, 12, 24, 48): past
this, the spread between processes, not their number, is what to look at;
and each waiting worker of a sweep's pool holds a GPU context."""
DEFAULT_BUDGET_S = 40.0
"""Seconds of timed processes one point may take on a GPU (``--budget``).
Why 40: a whole 20-point sweep (Llama 3 8B's projections) should fit about
15 minutes on an H200, 45 s a point with its cold work included, and a
process of a sweep takes about 2-4 s there (1 s of rounds, heat-soak,
prepare and checks), so 40 s holds the first looks (3 + 3 + 6 = 12
processes) of a point that needs them; a pair decided at its first look (a
3x difference: the seed ``compare``) costs 3 processes whatever the budget."""


def look_alpha(look: int, alpha: float) -> float:
    """The error level spent at look ``look`` (from 1): ``alpha 6 / (pi^2 look^2)``."""
    if look < 1:
        raise ValueError(f"looks count from 1, got {look}")
    return alpha * 6.0 / (math.pi**2 * look**2)


def look_confidence(look: int, confidence: float) -> float:
    """The confidence of look ``look``'s intervals, for a run whose whole
    sequence keeps the error at ``1 - confidence`` (before Bonferroni over
    pairs, which :func:`gemmreg.timing.stats.family_confidence` applies)."""
    return 1.0 - look_alpha(look, 1.0 - confidence)


def doubling(done: int) -> int:
    """The most processes the next look adds after ``done``: as many again,
    none past :data:`MAX_PROCESSES`."""
    return max(0, min(done, MAX_PROCESSES - done))


def next_batch(done: int, elapsed_s: float, budget_s: float) -> int:
    """How many processes the next look adds after ``done`` took
    ``elapsed_s``: as many again (doubling), fewer where only fewer are
    expected to finish within ``budget_s`` at the pace so far, none past
    :data:`MAX_PROCESSES` or when not one more fits."""
    if done < 1:
        return 0
    per_process = elapsed_s / done
    fits = math.floor((budget_s - elapsed_s) / per_process) if per_process > 0 else done
    return max(0, min(doubling(done), fits))


def decided(word: str) -> bool:
    """A word a look stops at: anything but INCONCLUSIVE."""
    return word != "inconclusive"


def undecided_note(processes: int, budget_s: float | None, elapsed_s: float | None = None) -> str:
    """What an INCONCLUSIVE verdict says happened: how many processes it had,
    and what would have given it more. ``elapsed_s``: the seconds the run's
    processes took by its last look (the later batches' start-ups included, as
    the budget counts them; None in runs saved before it was kept), from which
    a budget that ran out names the ``--budget`` that would have paid for the
    next look at the same pace: arithmetic on what happened, not a promise
    that the look would decide."""
    if budget_s is None:
        return (
            f"undecided after {processes} processes, a fixed count (--processes, or the "
            "CPU's default); --budget SECONDS adds processes until every pair is decided"
        )
    if processes >= MAX_PROCESSES:
        why = f"{MAX_PROCESSES}, the most a run adds: the spread between processes is too wide"
    else:
        why = "another batch would not have fit"
        needed = next_look_budget(processes, elapsed_s)
        if needed is not None:
            more = doubling(processes)
            why += (
                f": they took {elapsed_s:.0f} s, so {more} more at that pace need"
                f" --budget {needed:g} or more"
            )
    return f"undecided after {processes} processes within the budget of {budget_s:g} s ({why})"


def next_look_budget(processes: int, elapsed_s: float | None) -> float | None:
    """The whole seconds of budget the next look (a doubling batch, capped at
    :data:`MAX_PROCESSES`) takes after ``processes`` took ``elapsed_s``, at
    their pace (:func:`next_batch`'s own arithmetic, so that budget starts
    it); None without a pace to go by."""
    if elapsed_s is None or processes < 1 or elapsed_s <= 0 or processes >= MAX_PROCESSES:
        return None
    more = doubling(processes)
    budget = float(math.ceil(elapsed_s * (processes + more) / processes))
    while next_batch(processes, elapsed_s, budget) < more:  # a float's last bit
        budget += 1.0
    return budget


def decided_note(look: int, processes: int, confidence: float) -> str:
    """What a decided verdict of a sequential run adds to its explanation."""
    return (
        f"decided at look {look} of a sequential run ({processes} processes), "
        f"interval at that look's {numbers.level_percent(confidence)}"
    )
