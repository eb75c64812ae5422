"""Figures as text (:mod:`gemmreg.contract.numbers`): a printed value reads
back as itself to its precision, a real ratio never prints as zero, and a
range never joins its ends with a hyphen."""

from __future__ import annotations

import math

import pytest
from gemmreg.contract import numbers
from gemmreg.contract.numbers import SCIENTIFIC_BELOW, significant, span
from hypothesis import given
from hypothesis import strategies as st

finite = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False)
"""Any finite value (subnormals hold fewer digits than they print)."""
digits = st.integers(min_value=1, max_value=8)


@given(finite, digits)
def test_a_figure_reads_back_within_its_precision(value, places):
    text = significant(value, places)
    back = float(text)
    # Rounded to `places` significant digits: off by at most half a unit of
    # the last digit kept, i.e. 5 * 10**-places of the value.
    assert abs(back - value) <= 5 * 10.0**-places * abs(value) * (1 + 1e-9), text


@given(finite.filter(lambda v: v != 0), digits)
def test_a_real_value_never_prints_as_zero(value, places):
    text = significant(value, places)
    assert float(text) != 0, text
    assert text.lstrip("-").strip("0.") != "", text


@given(finite.filter(lambda v: v != 0))
def test_scientific_only_below_the_threshold(value):
    text = significant(value)
    assert ("e" in text) == (abs(float(text)) < SCIENTIFIC_BELOW), text


@given(finite, finite)
def test_a_range_reads_unambiguously(low, high):
    text = span(low, high)
    first, second = text.split(numbers.RANGE_JOINER)
    assert (float(first), float(second)) == (float(significant(low)), float(significant(high)))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (4.72e-05, "4.72e-05"),
        (0.000123456, "0.0001235"),
        (0.9583968, "0.9584"),
        (1.68, "1.68"),  # trailing zeros dropped, as %g does
        (786.66, "786.7"),
        (12345.6, "12346"),  # never 1.235e+04
        (9.99996e-05, "0.0001"),  # rounding up across the threshold stays fixed
        (-2.5e-07, "-2.5e-07"),
        (0.0, "0"),
        (math.inf, "inf"),
    ],
)
def test_examples(value, text):
    assert significant(value) == text


def test_a_range_of_small_numbers_reads_with_to():
    """Once printed ``4.72e-05-7.34e-05``: the hyphen blurred with the exponent's minus."""
    assert span(4.72e-05, 7.34e-05) == "4.72e-05 to 7.34e-05"
    assert significant(4.72e-05) != "0.000"


def test_a_verdicts_explanation_writes_its_interval_as_a_range():
    """The judges write figures by the same rule: the explanation saved with a
    verdict reads ``LOW to HIGH`` even where the ends are in scientific notation."""
    from gemmreg.timing import verdicts
    from gemmreg.timing.stats import Interval
    from gemmreg.timing.timing_records import RegimeResult

    interval = Interval(estimate=5.9e-05, low=4.72e-05, high=7.34e-05, confidence=0.995, units=5)
    result = RegimeResult(regime="end-to-end", word="slower", interval=interval)
    word, why = verdicts._explain(result, 0.01)
    assert word == "slower"
    assert "interval 4.72e-05 to 7.34e-05 over 5 processes" in why


positive = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)


@given(positive, st.floats(min_value=1e-6, max_value=1.0))
def test_a_ratio_prints_on_its_own_side_of_1_and_of_the_margin(value, margin):
    """A verdict's word rests on which side of 1 and of the margin each end
    of its interval lies: 0.99997 printed as ``1`` beside SLOWER read as an
    interval that reaches 1."""
    marks = (1.0, 1.0 + margin, 1.0 / (1.0 + margin))
    back = float(numbers.ratio(value, marks))
    for mark in marks:
        assert (back > mark) == (value > mark) and (back < mark) == (value < mark)


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.99997, "0.99997"), (1.00003, "1.00003"), (1.0, "1"), (0.9583968, "0.9584"), (2.5, "2.5")],
)
def test_ratio_examples(value, text):
    assert numbers.ratio(value) == text


def test_a_ratio_span_never_rounds_an_end_onto_1():
    assert numbers.ratio_span(0.98426, 0.99997) == "0.9843 to 0.99997"


@given(st.floats(min_value=0.5, max_value=1.0, exclude_max=True))
def test_a_confidence_below_one_never_prints_as_100_percent(level):
    """Bonferroni over 15 pairs at a sequential run's 4th look asks for
    99.9987%, which four digits wrote as ``100%``."""
    assert numbers.level_percent(level) != "100%"
    assert float(numbers.level_percent(level)[:-1]) < 100


@pytest.mark.parametrize(("count", "text"), [(0, "0 points"), (1, "1 point"), (2, "2 points")])
def test_a_count_takes_the_singular_for_one_alone(count, text):
    assert numbers.counted(count, "point") == text
