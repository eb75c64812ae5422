"""How a request's values are bounded, and how a refusal names the option.

Shared by the command line and the Python API (:mod:`gemmreg.commands.requests`
holds the records these check): a refusal names a field as the user wrote
it, ``--max-time`` on the command line and ``max_time`` in a call
(:data:`Spell`), and a value of the wrong type (a bool for a count, a lone
string for a list of plugins) is refused in one line like one out of bounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from gemmreg.contract import options as opt
from gemmreg.contract.options import UsageError

Spell = Callable[[str], str]
"""How the user wrote an option, from its field's name."""


_SINGULAR = {
    "dtypes": "dtype",
    "layouts": "layout",
    "out_dtypes": "out_dtype",
    "scalings": "scaling",
    "batches": "batch",
    "batch_layouts": "batch_layout",
}
""":class:`CheckRequest`'s fields (:mod:`gemmreg.commands.requests`) that hold several values, each an option of one name."""


def option_spelling(field: str) -> str:
    """The command line's: ``max_time`` -> ``--max-time``, ``batches`` -> ``--batch``."""
    return "--" + _SINGULAR.get(field, field).replace("_", "-")


def keyword_spelling(field: str) -> str:
    """The Python API's: the keyword itself."""
    return field


def check_integer(value: object, low: int, high: int, shown: str) -> None:
    """None, or an integer (not a bool) in ``[low, high]``."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{shown}: expected an integer from {low} to {high}, got {value!r}")
    wrong = opt.integer_bounds(value, low, high)
    if wrong:
        raise UsageError(f"{shown}: {wrong}")


def check_number(value: object, low: float, high: float, low_open: bool, shown: str) -> None:
    """None, or a finite number (not a bool) within the bounds."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise UsageError(f"{shown}: must be a finite number, got {value!r}")
    wrong = opt.number_bounds(value, low, high, low_open)
    if wrong:
        raise UsageError(f"{shown}: {wrong}")


def check_timeout(value: object, shown: str) -> None:
    """A worker task's limit: None (scaled to the problem) or seconds above 0
    up to :data:`~gemmreg.contract.options.MAX_TIMEOUT_S`, as ``--timeout``."""
    check_number(value, 0.0, opt.MAX_TIMEOUT_S, True, shown)


def check_batches(batches: Sequence[int], shown: str) -> None:
    """At least one batch size, each an integer from 1 to ``MAX_BATCH``, none twice."""
    from gemmreg.contract.batching import MAX_BATCH

    if not batches:
        raise UsageError(f"{shown}: names no batch size")
    for batch in batches:
        check_integer(batch, 1, MAX_BATCH, shown)
    if len(set(batches)) != len(batches):
        raise UsageError(f"{shown}: names a batch size twice")


def check_names(command: str, names: Sequence[str], minimum: int) -> None:
    """Enough plugins, each named once (strings, not a lone string's letters)."""
    if isinstance(names, str) or not all(isinstance(name, str) for name in names):
        raise UsageError(f"{command} takes a list of plugin names, got {names!r}")
    if len(names) < minimum:
        need = "two plugins" if minimum == 2 else "one plugin"
        raise UsageError(f"{command} needs at least {need}")
    if len(set(names)) != len(names):
        raise UsageError(f"{command} names a plugin twice")
