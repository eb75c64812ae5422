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
    from gemmreg.contract.records import BatchLayout, DType, Layout, OutDType, Scaling


def _dtypes(value: str | None, option: str = "--dtype") -> list[DType]:
    """The dtypes named (none: fp32, fp16 and bf16; fp8 and int8 run when named)."""
    from gemmreg.contract.records import ALL_DTYPES, DTYPES

    return list(DTYPES) if value is None else opt.choices(value, ALL_DTYPES, "dtype", option)


def _one_out_dtype(value: str | None) -> OutDType | None:
    """``compare``'s and ``bench``'s ``--out-dtype``: one, for their fp8 dtypes."""
    chosen = [] if value is None else _out_dtypes(value)
    if len(chosen) > 1:
        raise opt.UsageError(f"--out-dtype {value!r}: compare and bench take one")
    return chosen[0] if chosen else None


def _one_scaling(value: str | None) -> Scaling | None:
    """``compare``'s and ``bench``'s ``--scaling``: one, for their fp8 dtypes."""
    chosen = [] if value is None else _scalings(value)
    if len(chosen) > 1:
        raise opt.UsageError(f"--scaling {value!r}: compare and bench take one")
    return chosen[0] if chosen else None


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


def _batch_layouts(value: str | None) -> list[BatchLayout]:
    """``--batch-layout``: the batch layouts named (none: [], every one)."""
    from gemmreg.contract.records import BATCH_LAYOUTS

    if value is None:
        return []
    return opt.choices(value, BATCH_LAYOUTS, "batch layout", "--batch-layout")


def _layouts(value: str | None) -> list[Layout]:
    from gemmreg.contract.records import LAYOUTS

    return opt.choices(value, LAYOUTS, "layout", "--layout")


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _error(text: str) -> None:
    """One line on stderr for a failure that is not bad input (exit 1)."""
    print(f"gemmreg: {' '.join(text.splitlines())}", file=sys.stderr, flush=True)
