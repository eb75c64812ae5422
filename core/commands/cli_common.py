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
    from gemmreg.contract.records import DType, Layout, OutDType, Scaling

TIMED_LOW_PRECISION = (
    "timing {dtype} is not supported yet (the rounds' fresh values move A and B, not "
    "their scales); gemmreg check --dtype {dtype} checks it"
)


def _dtypes(value: str | None, option: str = "--dtype", low: bool = False) -> list[DType]:
    """The dtypes named (default: fp32, fp16 and bf16). ``low``: fp8 and int8
    are accepted (``check``); elsewhere they are refused, saying why."""
    from gemmreg.contract.records import ALL_DTYPES, DTYPES, LOW_PRECISION_DTYPES

    if value is None:
        return list(DTYPES)
    chosen = opt.choices(value, ALL_DTYPES, "dtype", option)
    timed_low = [d for d in chosen if d in LOW_PRECISION_DTYPES]
    if timed_low and not low:
        raise opt.UsageError(TIMED_LOW_PRECISION.format(dtype=timed_low[0]))
    return chosen


def _out_dtypes(value: str | None) -> list[OutDType]:
    """``--out-dtype``: fp8's output dtypes (none named: [], all of them)."""
    from gemmreg.contract.low_precision import FP8_OUT_DTYPES

    return (
        [] if value is None else opt.choices(value, FP8_OUT_DTYPES, "output dtype", "--out-dtype")
    )


def _scalings(value: str | None) -> list[Scaling]:
    """``--scaling``: fp8's scalings (none named: [], both)."""
    from gemmreg.contract.low_precision import FP8_SCALINGS

    return [] if value is None else opt.choices(value, FP8_SCALINGS, "scaling", "--scaling")


def _layouts(value: str | None) -> list[Layout]:
    from gemmreg.contract.records import LAYOUTS

    return opt.choices(value, LAYOUTS, "layout", "--layout")


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _error(text: str) -> None:
    """One line on stderr for a failure that is not bad input (exit 1)."""
    print(f"gemmreg: {' '.join(text.splitlines())}", file=sys.stderr, flush=True)
