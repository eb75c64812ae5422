"""scripts/probes/cluster_runs.py, the runner parts both cluster probes use,
on the CPU: the repeat check tells a C that changes on a later call, and the
interleaved rounds time every candidate once a round against the baseline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "probes"))
import cluster_runs


def test_the_repeat_check_keeps_the_first_c_and_tells_a_later_call_that_differs():
    out = torch.full((2, 2), float("nan"))
    calls = []

    def steady() -> None:
        calls.append(1)
        out.copy_(torch.ones(2, 2))

    first, same = cluster_runs.first_and_repeats(steady, out)
    assert same and torch.equal(first, torch.ones(2, 2))
    assert len(calls) == 1 + cluster_runs.REPEATS

    def drifts() -> None:  # right on the first calls, off from the third
        calls.append(1)
        out.copy_(torch.ones(2, 2) * (1 if len(calls) < 3 else 2))

    calls.clear()
    first, same = cluster_runs.first_and_repeats(drifts, out)
    assert not same and torch.equal(first, torch.ones(2, 2))


def test_every_candidate_is_timed_once_a_round_against_the_baseline(monkeypatch):
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)  # the CPU's calls are synchronous
    counts = {"base": 0, "other": 0}
    candidates = {name: (lambda name=name: counts.__setitem__(name, counts[name] + 1))
                  for name in counts}  # fmt: skip
    rounds, calls = 4, 3
    times, summary = cluster_runs.interleaved_rounds(candidates, "base", rounds, calls)
    assert counts == {"base": 2 + rounds * calls, "other": 2 + rounds * calls}
    assert {name: len(ms) for name, ms in times.items()} == {"base": rounds, "other": rounds}
    base = summary["base"]
    assert base["speedup_median"] == base["speedup_low"] == base["speedup_high"] == 1.0
    ratios = sorted(b / o for b, o in zip(times["base"], times["other"], strict=True))
    assert summary["other"]["speedup_low"] == ratios[0]
    assert summary["other"]["speedup_high"] == ratios[-1]


def test_the_error_share_is_the_worst_error_over_the_product_of_magnitudes():
    a = torch.tensor([[1.0, -2.0]])
    b = torch.tensor([[3.0], [1.0]])
    c = torch.tensor([[1.5]])  # exact 1.0, |a|@|b| 5.0
    assert cluster_runs.error_share(c, a, b) == pytest.approx(0.1)
