"""A comparison's verdicts from its processes, at a fixed count or look by look.

A fixed count (``--processes``, and every run saved before looks existed)
is judged once, at the run's confidence, as it always was. A sequential run
(:mod:`gemmreg.timing.sequential`) is judged again at every look it took,
each look on the processes finished by then and at that look's level; each
pair keeps the verdict of the first look that decided it. The same function
judges during the run (should another batch start?), at its end and in
``report --margin``, so a saved run is judged again exactly as it was run.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from gemmreg.timing import sequential
from gemmreg.timing.timing_records import KernelSummary, ProcessRecord, Verdict
from gemmreg.timing.verdicts import all_verdicts


def verdicts(
    summaries: Sequence[KernelSummary],
    records: Sequence[ProcessRecord],
    *,
    confidence: float,
    margin: float,
    processes: int,
    looks: Sequence[int] = (),
    budget_s: float | None = None,
    look_s: Sequence[float] = (),
) -> tuple[Verdict, ...]:
    """Every pair's verdict: at ``processes`` (a fixed count) when ``looks``
    is empty, else at the first of ``looks`` (the processes finished at
    each) that decided it, or the last look's INCONCLUSIVE, which says it
    ran out of ``budget_s`` (and, from ``look_s``, the seconds taken by each
    look, at what pace)."""
    if not looks:
        judged = all_verdicts(summaries, records, confidence=confidence, margin=margin)
        return tuple(_stamped(v, processes, None, None) for v in judged)
    chosen: dict[tuple[str, str], Verdict] = {}
    order: list[tuple[str, str]] = []
    elapsed = look_s[len(looks) - 1] if len(look_s) == len(looks) else None
    for look, count in enumerate(looks, 1):
        level = sequential.look_confidence(look, confidence)
        upto = [r for r in records if r.process < count]
        last = look == len(looks)
        for v in all_verdicts(summaries, upto, confidence=level, margin=margin):
            key = (v.baseline, v.kernel)
            if look == 1:
                order.append(key)
            if key in chosen:
                continue
            if sequential.decided(v.verdict):
                chosen[key] = _decided(v, look, count)
            elif last:
                chosen[key] = _stamped(v, count, budget_s, elapsed)
    return tuple(chosen[key] for key in order if key in chosen)


def _stamped(
    v: Verdict, processes: int, budget_s: float | None, elapsed_s: float | None
) -> Verdict:
    """``v`` with its process count, and an undecided one's note."""
    notes = v.notes
    if v.verdict == "inconclusive":
        notes = (*notes, sequential.undecided_note(processes, budget_s, elapsed_s))
    return attrs.evolve(v, processes=processes, notes=notes)


def _decided(v: Verdict, look: int, processes: int) -> Verdict:
    """A sequential look's decision, which says which look and level it was."""
    if v.verdict in ("invalid", "no verdict") or v.confidence is None:
        return attrs.evolve(v, processes=processes)
    how = sequential.decided_note(look, processes, v.confidence)
    return attrs.evolve(v, processes=processes, explanation=f"{v.explanation}; {how}")


def interrupted(judged: Sequence[Verdict], records: Sequence[ProcessRecord]) -> tuple[Verdict, ...]:
    """The verdicts of a comparison cut short: partial data is no basis for a
    claim, nor for an estimate a summary would average (the weighted mean
    counts only points with a speedup), so each pair keeps its name and notes
    but no speedup, interval or regime figures, and names the processes that
    finished, not those asked for."""
    finished = len({r.process for r in records})
    return tuple(
        attrs.evolve(
            v,
            verdict="no verdict",
            speedup=None,
            interval=None,
            explanation="partial: interrupted",
            regimes=(),
            notes=tuple(n for n in v.notes if not n.startswith("regimes disagree")),
            processes=finished,
        )
        for v in judged
    )


def undecided(verdicts: Sequence[Verdict]) -> bool:
    """Whether some pair is still INCONCLUSIVE: another look would help it."""
    return any(not sequential.decided(v.verdict) for v in verdicts)
