"""Which code a launch runs, as its plugin names it (``gemmreg.variant``).

Why: a plugin that chooses per problem (a tuned config, a dispatch to a
split-K or GEMV kernel, a fallback for layouts a fast path refuses) runs
different code at different points of one sweep, and the same code under
one kernel name: a Triton kernel's profiled name says ``gemm_split_k`` for
every tile size. The plugin knows what it chose; ``prepare`` hands the
name back on the launch itself (an attribute, so no wrapper and no cost per
call), the core records it for every timed process, and ``report
--kernels`` shows it beside the device kernels the calls launched. Processes
that chose differently (a tuner's close call) show every name they chose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gemmreg.contract.vocabulary import Launch

ATTRIBUTE = "gemmreg_variant"
"""Where :func:`variant` keeps the name on the launch."""
LONGEST = 120
"""A variant names a choice in a table cell, not a report."""


def variant(launch: Launch, name: str) -> Launch:
    """``launch`` itself, carrying ``name``: what it runs (say
    ``"persistent_tma:128x256x64-s4-w8"``), one line of at most 120
    characters. Call it in ``prepare``, on the launch it returns::

        return gemmreg.variant(launch, config.name)

    ``ValueError`` on a name that is not one short line; ``TypeError`` on a
    launch that takes no attributes (a bound method: return a function)."""
    if not isinstance(name, str) or not name.strip() or "\n" in name or len(name) > LONGEST:
        raise ValueError(f"a variant is one line of 1 to {LONGEST} characters, got {name!r}")
    try:
        setattr(launch, ATTRIBUTE, name.strip())
    except (AttributeError, TypeError):
        raise TypeError(
            f"gemmreg.variant: {type(launch).__name__} takes no attributes; "
            "return a function (a closure) from prepare"
        ) from None
    return launch


def launch_variant(launch: object) -> str:
    """The name a launch carries, or '' (none given, or not a string: a
    launch is the plugin's object, and the record keeps only a name)."""
    found = getattr(launch, ATTRIBUTE, "")
    if not isinstance(found, str) or len(found) > LONGEST:
        return ""
    return found.replace("\n", " ")
