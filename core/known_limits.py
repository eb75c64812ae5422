"""Limits every kernel written in one language shares, declared once, here.

A Triton plugin opts in with ``Capabilities(triton=True)``; the core then
applies these wherever it decides what a kernel can run (``gemmreg list``,
``check``'s skips, ``Capabilities.require``). Each plugin restating them in
its own words drifted: one read ``TRITON_INTERPRET`` itself, one asked the
core, and a new plugin could forget.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from gemmreg import backend

if TYPE_CHECKING:
    from gemmreg.records import Problem

TRITON_INTERPRETER_BF16 = "bf16 is not supported by Triton's CPU interpreter"
"""NumPy has no bfloat16: Triton's interpreter (3.6) returns garbage for bf16
operands instead of refusing them, so the case is declared out."""

TRITON_MISSING = "triton is not installed"


def triton_unavailable() -> str | None:
    """Why no Triton kernel can run in this process, or None."""
    if importlib.util.find_spec("triton") is None:
        return TRITON_MISSING
    return None


def triton_unsupported(problem: Problem) -> str | None:
    """Why Triton cannot run ``problem`` correctly here, whatever the kernel, or None."""
    if problem.dtype == "bf16" and backend.current().triton_interpreter:
        return TRITON_INTERPRETER_BF16
    return None
