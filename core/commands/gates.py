"""``--fail-on``: a comparison's verdicts as a CI gate, so that "my kernel is
not SLOWER than cuBLAS" is an exit code, not JSON to parse.

A condition names the verdicts that fail the run: ``slower`` (a pair judged
SLOWER), ``not-faster`` (a pair judged anything but FASTER: SLOWER,
EQUIVALENT, INCONCLUSIVE, INVALID or no verdict) and ``invalid`` (a pair
INVALID). Pairs are the ones the tables list: each kernel against each one
named before it, so ``compare vendor_gemm my_gemm --fail-on slower`` gates
``my_gemm vs vendor_gemm``. A failed gate is exit 1 with one line naming the
pairs (:func:`gate_line`); the same verdicts are
:meth:`gemmreg.api.Run.failing` for a Python caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, get_args

from gemmreg.contract import options as opt
from gemmreg.contract.numbers import ratio
from gemmreg.timing.timing_records import CompareReport, Verdict

Condition = Literal["slower", "not-faster", "invalid"]
CONDITIONS: tuple[Condition, ...] = get_args(Condition)
SHOWN = 4
"""Pairs named in the gate's line; past that, a count of the rest."""


def parse(value: str) -> tuple[Condition, ...]:
    """``--fail-on``'s comma-separated conditions (bad input: one line, exit 2)."""
    return tuple(opt.choices(value, CONDITIONS, "--fail-on condition", "--fail-on"))


def fails(verdict: Verdict, condition: Condition) -> bool:
    """Whether ``verdict`` fails ``condition``."""
    if condition == "slower":
        return verdict.verdict == "slower"
    if condition == "invalid":
        return verdict.verdict == "invalid"
    return verdict.verdict != "faster"


def failing(
    reports: Iterable[CompareReport], conditions: Sequence[Condition]
) -> list[tuple[CompareReport, Verdict]]:
    """Every (point, verdict) that fails one of ``conditions``, in table order."""
    return [
        (report, verdict)
        for report in reports
        for verdict in report.verdicts
        if any(fails(verdict, condition) for condition in conditions)
    ]


def gate_line(reports: Iterable[CompareReport], conditions: Sequence[Condition]) -> str:
    """One line naming the pairs that fail the gate, or '' where none does."""
    found = failing(reports, conditions)
    if not found:
        return ""
    named = [
        f"{v.kernel} vs {v.baseline} at {r.problem.label}: {v.verdict.upper()}"
        + (f" {ratio(v.speedup)}x" if v.speedup is not None else "")
        for r, v in found[:SHOWN]
    ]
    more = f", and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    pairs = "pair" if len(found) == 1 else "pairs"
    return f"--fail-on {','.join(conditions)}: {len(found)} {pairs}: {'; '.join(named)}{more}"
