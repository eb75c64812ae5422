"""What every ``gemmreg`` command shares: exit codes, stderr lines, and the
choices of dtype and layout."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gemmreg.contract import options as opt

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_NOT_SAVED = 4
"""The storage refused a save mid-run (a full disk, a folder made unwritable
or read-only): one line names the file and what was kept; the figures were
printed as each point finished."""

if TYPE_CHECKING:
    from gemmreg.contract.records import DType, Layout


def _dtypes(value: str | None, option: str = "--dtype") -> list[DType]:
    from gemmreg.contract.records import DTYPES

    return opt.choices(value, DTYPES, "dtype", option)


def _layouts(value: str | None) -> list[Layout]:
    from gemmreg.contract.records import LAYOUTS

    return opt.choices(value, LAYOUTS, "layout", "--layout")


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _error(text: str) -> None:
    """One line on stderr for a failure that is not bad input (exit 1)."""
    print(f"gemmreg: {' '.join(text.splitlines())}", file=sys.stderr, flush=True)
