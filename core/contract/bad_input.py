"""The one error for bad input, from any room: a malformed option, an
unusable path, an environment variable that makes no sense. ``gemmreg``
reports it in one line and exits 2 (:mod:`gemmreg.cli`). It lives at the
bottom of the rooms (:mod:`gemmreg.contract.rooms`) because discovery refuses bad
input too (``GEMMREG_LOAD_TIMEOUT``), before any option is parsed.

Every refusal of a name (a command, an option, a plugin, a dtype, a layout,
a sanitizer tool) ends with :func:`did_you_mean`'s guess where one is close:
a typo costs one more look at the line, not a trip through the docs."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit code 2."""


SIMILARITY = 0.6
"""``difflib``'s ratio a known name needs to be offered (its default cutoff):
``compre`` and ``compare`` 0.92, ``--procesess`` and ``--processes`` 0.9,
``fp61`` and ``fp16`` 0.75; ``bench`` and ``check`` 0.2."""


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` naming the known name closest to ``word``
    (two where two are equally close), or ``""`` where none is close."""
    names = sorted({str(name) for name in known})
    close = difflib.get_close_matches(str(word), names, n=2, cutoff=SIMILARITY)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(name) for name in close) + "?"


SHOWN_CHARS = 40
"""How much of a refused value a line quotes: enough to find it in the input."""


def shown(value: object, width: int = SHOWN_CHARS) -> str:
    """``value``'s repr, cut to ``width`` characters, built bounded: a value
    read from a file may be a list nested a thousand deep or a megabyte of
    text, and ``f"{value!r:.40}"`` builds the whole repr before cutting it."""
    import reprlib

    bounded = reprlib.Repr()
    bounded.maxlevel, bounded.maxstring, bounded.maxother = 3, width + 2, width + 2
    bounded.maxlist = bounded.maxtuple = bounded.maxdict = bounded.maxset = 6
    text = bounded.repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
