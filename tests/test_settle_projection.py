"""What would settle an inconclusive verdict: the projected process count
(gemmreg.judging.stats.processes_to_settle) and the verdict's note that says it."""

from __future__ import annotations

import math
import statistics

import pytest
from gemmreg.judging import stats
from gemmreg.judging.verdicts import judge
from test_verdicts import records, summary, verdict


def same_spread(values: list[float], n: int) -> list[float]:
    """``n`` values with exactly the mean and sample deviation of ``values``."""
    centre, sd = statistics.fmean(values), statistics.stdev(values)
    raw = [i - (n - 1) / 2 for i in range(n)]
    scale = sd / statistics.stdev(raw)
    return [centre + r * scale for r in raw]


SPREAD = [math.log(1.025) + d for d in (0.03, -0.02, 0.015, -0.03, 0.005)]
"""2.5% faster on average, with processes spread over about +-3%: no claim
from five of them."""


def test_the_projection_is_the_first_count_whose_interval_is_not_inconclusive():
    assert stats.classify(stats.combine(SPREAD)) == "inconclusive"
    n = stats.processes_to_settle(SPREAD)
    assert n is not None and n > len(SPREAD)
    # the projection agrees with the interval the verdict itself would compute
    assert stats.classify(stats.combine(same_spread(SPREAD, n))) == "faster"
    assert stats.classify(stats.combine(same_spread(SPREAD, n - 1))) == "inconclusive"


def test_a_wider_spread_needs_more_processes_and_a_higher_confidence_too():
    wider = [statistics.fmean(SPREAD) + 2 * (v - statistics.fmean(SPREAD)) for v in SPREAD]
    base = stats.processes_to_settle(SPREAD)
    assert base is not None
    assert (stats.processes_to_settle(wider) or math.inf) > base
    assert (stats.processes_to_settle(SPREAD, confidence=0.9999) or math.inf) > base


WIDE = [math.log(1.009) + d for d in (0.03, -0.03, 0.02, -0.02, 0.0)]
"""0.9% faster, processes spread over +-3%: near the margin's edge, where only
a half-width under 0.9% separates a claim from equivalence."""


def test_a_wide_spread_near_the_margin_or_too_few_processes_project_nothing():
    assert stats.processes_to_settle(WIDE) is None
    assert stats.processes_to_settle(WIDE, cap=10_000) is not None  # it does settle, eventually
    assert stats.processes_to_settle([0.01, 0.02]) is None
    assert stats.processes_to_settle(SPREAD, cap=len(SPREAD) + 1) is None


def test_an_a_a_pair_with_a_spread_projects_equivalence_not_a_claim():
    twins = [0.015, -0.012, 0.01, -0.016, 0.003]
    assert stats.classify(stats.combine(twins)) == "inconclusive"
    n = stats.processes_to_settle(twins)
    assert n is not None
    assert stats.classify(stats.combine(same_spread(twins, n))) == "equivalent"


def test_an_inconclusive_verdict_says_how_many_processes_would_settle_it():
    v = verdict(SPREAD)
    n = stats.processes_to_settle(SPREAD)
    assert v.verdict == "inconclusive"
    assert f"--processes {n}" in " ".join(v.notes) and "if the estimate holds" in " ".join(v.notes)
    stuck = verdict(WIDE)
    assert stuck.verdict == "inconclusive" and "--processes" not in " ".join(stuck.notes)
    assert f"even {stats.SETTLE_CAP} would not settle it" in " ".join(stuck.notes)


def test_a_run_of_more_processes_than_the_cap_is_still_projected():
    """A hundred processes measured: the projection looks past 64, up to 400."""
    wider = [math.log(1.009) + 2 * d for d in (0.03, -0.03, 0.02, -0.02, 0.0)]
    many = same_spread(wider, 100)
    assert stats.settle_limit(100) == 400
    n = stats.processes_to_settle(many)
    assert n is not None and 100 < n <= 400
    assert stats.classify(stats.combine(same_spread(wider, n))) != "inconclusive"
    v = verdict(many)
    assert v.verdict == "inconclusive" and f"--processes {n}" in " ".join(v.notes)


def test_claims_and_too_few_processes_get_no_hint():
    claim = verdict([math.log(1.05)] * 3 + [math.log(1.051)] * 2)
    assert claim.verdict == "faster" and not any("settle" in n for n in claim.notes)
    few = verdict([0.2, 0.21])
    assert "at least 3" in few.explanation and not any("settle" in n for n in few.notes)


@pytest.mark.parametrize("pairs", [1, 6])
def test_the_hint_uses_the_pair_family_confidence(pairs):
    """With more pairs judged at once each interval is wider (Bonferroni), and
    the projection must be made at that same confidence."""
    level = stats.family_confidence(stats.CONFIDENCE, pairs)
    v = judge(
        summary("base"),
        summary("new"),
        records(SPREAD),
        confidence=level,
        margin=stats.DEFAULT_MARGIN,
    )
    n = stats.processes_to_settle(SPREAD, confidence=level)
    assert v.verdict == "inconclusive" and f"--processes {n}" in " ".join(v.notes)


def test_every_estimate_settles_once_the_half_width_is_under_half_the_margin():
    """What SETTLE_CAP's reasoning rests on: inside the margin by more than the
    half-width is equivalent, past 1 by more than it is a claim, and with a
    half-width under half the margin one of the two always holds."""
    margin = stats.DEFAULT_MARGIN
    edge = math.log(1 + margin)
    for step in range(-300, 301):
        centre = step * edge / 100  # -3 to +3 margins, through 0 and both edges
        for half in (0.0, 0.1 * edge, 0.49 * edge):
            interval = stats.Interval(
                estimate=math.exp(centre),
                low=math.exp(centre - half),
                high=math.exp(centre + half),
                confidence=stats.CONFIDENCE,
                units=10,
            )
            assert stats.classify(interval, margin) != "inconclusive", (centre, half)
