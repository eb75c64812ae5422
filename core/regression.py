"""Two saved runs side by side (two machines, two commits), judged with the
same rules as a comparison: a regression is a verdict of "slower" (interval
excludes 1, ranges apart) whose slowdown also exceeds the threshold."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from gemmreg.comparing import CompareReport, KernelSummary, Verdict, judge

DEFAULT_THRESHOLD_PCT = 5.0
"""Slowdowns smaller than this are not called regressions, even when real."""


@attrs.frozen(kw_only=True)
class Change:
    problem: str
    kernel: str
    before: KernelSummary
    after: KernelSummary
    verdict: Verdict
    change_pct: float | None
    """(after / before - 1) in percent of time: positive is slower."""
    regression: bool


def compare_runs(
    before: Sequence[CompareReport], after: Sequence[CompareReport], threshold_pct: float
) -> list[Change]:
    """One change per (problem, kernel) present in both runs."""
    earlier = {(r.problem.label, s.kernel): s for r in before for s in r.summaries}
    changes = []
    for report in after:
        for summary in report.summaries:
            key = (report.problem.label, summary.kernel)
            if key not in earlier:
                continue
            old = earlier[key]
            # Same kernel on both sides: rename so the verdict reads "after vs before".
            verdict = judge(
                attrs.evolve(old, kernel=f"{old.kernel}@before"),
                attrs.evolve(summary, kernel=f"{summary.kernel}@after"),
            )
            pct = None
            if old.center_ms and summary.center_ms:
                pct = 100 * (summary.center_ms / old.center_ms - 1)
            regression = verdict.verdict == "slower" and pct is not None and pct > threshold_pct
            changes.append(
                Change(
                    problem=key[0],
                    kernel=summary.kernel,
                    before=old,
                    after=summary,
                    verdict=verdict,
                    change_pct=pct,
                    regression=regression,
                )
            )
    return changes
