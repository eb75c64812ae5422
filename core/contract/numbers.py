"""Figures as text: the one rule every table, legend and explanation writes a
number by, so that a value reads back as what it is.

A ratio of 4.72e-05 must not print as ``0.000x`` (a real speedup read as
none), and a range must not be joined by a hyphen that blurs with an
exponent's minus sign (``4.72e-05-7.34e-05``): a figure keeps its significant
digits at any size, turns scientific only when small, and a range is written
``LOW to HIGH``. It sits in the contract because both the judges (a
verdict's explanation) and the renderers write figures.
"""

from __future__ import annotations

import math

SIGNIFICANT_DIGITS = 4
"""Digits a figure keeps by default: a ratio to 0.01% of itself, finer than any
interval the timing protocol resolves."""
SCIENTIFIC_BELOW = 1e-4
"""Magnitudes below this are written in scientific notation: in fixed notation
they would need more zeros than digits (``0.00004720``)."""
RANGE_JOINER = " to "
"""Between a range's ends: words, never a hyphen (``1e-05-2e-05`` reads as
three numbers)."""


def significant(value: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros dropped:
    fixed notation from :data:`SCIENTIFIC_BELOW` up (large values keep their
    integer digits, never ``1.235e+04``), scientific below it. A non-zero
    value never prints as zero; ``inf`` and ``nan`` print as such."""
    if digits < 1:
        raise ValueError(f"digits must be at least 1, got {digits}")
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    if abs(value) < SCIENTIFIC_BELOW:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        if abs(float(f"{mantissa}e{exponent}")) >= SCIENTIFIC_BELOW:
            return significant(math.copysign(SCIENTIFIC_BELOW, value), digits)
        return f"{_trim(mantissa)}e{exponent}"
    decimals = max(digits - 1 - math.floor(math.log10(abs(value))), 0)
    return _trim(f"{value:.{decimals}f}")


def span(low: float, high: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """A range, ``LOW to HIGH``, each end by :func:`significant`."""
    return f"{significant(low, digits)}{RANGE_JOINER}{significant(high, digits)}"


def _trim(fixed: str) -> str:
    """``1.680`` -> ``1.68``, ``100.0`` -> ``100``; integers are left alone."""
    if "." not in fixed:
        return fixed
    return fixed.rstrip("0").rstrip(".")


MOST_DIGITS = 17
"""Enough digits to write any double exactly: where :func:`ratio` stops."""


def ratio(value: float, marks: tuple[float, ...] = (1.0,), digits: int = SIGNIFICANT_DIGITS) -> str:
    """A ratio (a speedup, an end of its interval) by :func:`significant`,
    with more digits where ``digits`` would print it on or across one of
    ``marks`` that it is not on: a verdict's word rests on which side of 1
    (and of its margin) each end lies, so an upper end of 0.99997 beside
    SLOWER must read ``0.99997``, never ``1``, which says the interval
    reaches 1."""
    text = significant(value, digits)
    while digits < MOST_DIGITS and math.isfinite(value) and _crosses(value, float(text), marks):
        digits += 1
        text = significant(value, digits)
    return text


def ratio_span(
    low: float, high: float, marks: tuple[float, ...] = (1.0,), digits: int = SIGNIFICANT_DIGITS
) -> str:
    """An interval of a ratio, ``LOW to HIGH``, each end by :func:`ratio`."""
    return f"{ratio(low, marks, digits)}{RANGE_JOINER}{ratio(high, marks, digits)}"


def _crosses(value: float, printed: float, marks: tuple[float, ...]) -> bool:
    """Whether ``printed`` lies on another side of some mark than ``value``
    (on it counts as a side of its own)."""
    return any((value > m) - (value < m) != (printed > m) - (printed < m) for m in marks)


def level_percent(level: float) -> str:
    """A confidence level in percent (``99.5%``), with more digits where four
    would round it up to ``100%``: Bonferroni over many pairs at a late
    sequential look asks for 99.9987%, and no interval is a 100% one."""
    return f"{ratio(100 * level, (100.0,))}%"


def percent_inside(difference: float, margin: float) -> str:
    """A difference inside the margin in percent (``0.67%``), with the
    digits that keep it below the margin as printed: 0.996% beside a margin
    of 1.0% would round to ``1.00%``, a difference the margin does not hold."""
    shown = f"{difference:.2%}"
    if float(shown[:-1]) < round(100 * margin, 12):
        return shown
    return f"{ratio(100 * difference, (round(100 * margin, 12),))}%"


def margin_percent(margin: float) -> str:
    """The margin in percent as the explanations always wrote it (``1.0%``),
    with more digits where one decimal would misstate it (``--margin 0.04``
    printed ``+-0.0%`` beside a claim that reaches past it)."""
    text = f"{margin:.1%}"
    return text if float(text[:-1]) == round(100 * margin, 12) else f"{significant(100 * margin)}%"


def counted(count: int, noun: str) -> str:
    """``1 point``, ``3 points``: a count beside its noun, singular for one
    (a sweep whose other points were left out has a mean over one point)."""
    return f"{count} {noun}" + ("" if count == 1 else "s")
