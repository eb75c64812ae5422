"""``gemmreg.sample_ms``: the judge's clock lent to a plugin's tuner (on the CPU
here: the host's time around each synchronous call)."""

from __future__ import annotations

import gemmreg
import pytest


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
