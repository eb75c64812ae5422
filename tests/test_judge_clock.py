"""``gemmreg.sample_ms``: the judge's clock lent to a plugin's tuner (on the CPU
here: the host's time around each synchronous call), and ``gemmreg.clock_note``:
how that clock queued its batches."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import gemmreg
import pytest
from gemmreg.contract import judge_clock


def test_the_clock_takes_one_sample_per_call_in_milliseconds():
    calls = []
    samples = gemmreg.sample_ms(lambda: calls.append(1), 4)
    assert len(samples) == 4 and len(calls) == 4
    assert all(isinstance(s, float) and s >= 0.0 for s in samples)


def test_the_clock_is_the_protocols_own_and_made_once():
    from gemmreg.contract import judge_clock
    from gemmreg.timing.clocks import CpuClock

    assert isinstance(judge_clock._clock(), CpuClock)
    assert judge_clock._clock() is judge_clock._clock()


def test_no_samples_is_refused():
    with pytest.raises(ValueError, match="at least one sample"):
        gemmreg.sample_ms(lambda: None, 0)


def test_the_note_is_empty_before_any_clock_and_on_the_cpu(monkeypatch):
    made = []
    monkeypatch.setattr(judge_clock, "_clock", functools.cache(lambda: made.append(1)))
    assert gemmreg.clock_note() == "" and made == []  # asking makes no clock
    monkeypatch.undo()
    gemmreg.sample_ms(lambda: None, 1)
    assert gemmreg.clock_note() == ""  # the CPU clock holds nothing, retakes nothing


@pytest.mark.parametrize(
    ("retakes", "queued", "note"),
    [
        ((), "", ""),
        (("x",), "", "1 batch taken again after their hold gave up (x)"),
        (("x", "y"), "", "2 batches taken again after their hold gave up (y)"),
        (
            ("x", "y", "z"),
            "stream hold gave up 3 times",
            "3 batches taken again after their hold gave up (z); stream hold gave up 3 times",
        ),
        ((), "no stream hold (X)", "no stream hold (X)"),
    ],
)
def test_the_note_says_what_the_gpu_clock_retook_and_why_it_spins(
    monkeypatch, retakes, queued, note
):
    clock = SimpleNamespace(retakes=retakes, queued=queued)
    cached = functools.cache(lambda: clock)
    cached()
    monkeypatch.setattr(judge_clock, "_clock", cached)
    assert gemmreg.clock_note() == note
