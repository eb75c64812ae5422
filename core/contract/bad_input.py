"""The one error for bad input, from any room: a malformed option, an
unusable path, an environment variable that makes no sense. ``gemmreg``
reports it in one line and exits 2 (:mod:`gemmreg.cli`). It lives at the
bottom of the rooms (:mod:`gemmreg.contract.rooms`) because discovery refuses bad
input too (``GEMMREG_LOAD_TIMEOUT``), before any option is parsed."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit code 2."""
