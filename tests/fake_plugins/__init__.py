"""Throwaway plugins for gemmreg's own tests. Each module is one plugin,
loaded through GEMMREG_EXTRA_PLUGINS (so worker processes can import it too,
with this folder's parent on PYTHONPATH) or through fake entry points."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gemmreg


def fp32_spec(
    name: str, launch: Callable[[Any, Any, Any], None], **overrides: Any
) -> gemmreg.KernelSpec:
    """A CPU-capable fp32 kernel spec around ``launch(a, b, out)``."""
    fields: dict[str, Any] = {
        "name": name,
        "summary": f"test kernel {name}",
        "prepare": lambda problem: launch,
        "capabilities": gemmreg.Capabilities(
            dtypes={"fp32"},
            backends={"cpu", "cuda", "rocm"},
            precision={"fp32": gemmreg.Precision(math="ieee_fp32", detail="torch ops")},
            layouts={"rowmajor", "transposedA", "transposedB", "padded"},
        ),
        "tolerances": {"fp32": gemmreg.Tolerance(rtol=3e-5, atol=1e-6, why="IEEE fp32")},
    }
    fields.update(overrides)
    return gemmreg.KernelSpec(**fields)


def claimed_once(marker: str) -> bool:
    """Whether this call made the file ``marker``, atomically: of every worker
    racing to, exactly one does, so a misbehaviour keyed on it happens once."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True
