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

from gemmreg.contract import backend

if TYPE_CHECKING:
    from gemmreg.contract.records import Problem

TRITON_INTERPRETER_BF16 = "bf16 is not supported by Triton's CPU interpreter"
"""NumPy has no bfloat16: Triton's interpreter (3.6) returns garbage for bf16
operands instead of refusing them, so the case is declared out."""

TRITON_INTERPRETER_FP8 = "fp8 is not supported by Triton's CPU interpreter"
"""NumPy has no fp8 type either: the interpreter cannot hold fp8 operands."""

TRITON_MISSING = "triton is not installed"

INTERPRETER_NUMPY_FIXED_IN = (3, 7)
"""Triton's interpreter before 3.7 calls ``int()`` on one-element arrays,
which NumPy 2.4 refuses; 3.7.0 and 3.7.1 squeeze them first (their
``interpreter.py``). With NumPy 2.4.6 a masked ``tl.dot`` GEMM fails on 3.6.0
and runs on 3.7.1; Triton 3.7.1 (the whole test suite) and 3.8 passed the
CPU matrix with it.
gemmreg does not pin NumPy for everyone over it: GPU users never run the
interpreter; a CPU user with both gets this reason on every Triton row."""
INTERPRETER_NUMPY_LIMIT = (2, 4)


def _installed(distribution: str) -> str | None:
    """The installed version of ``distribution``, read without importing it."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _version(distribution: str) -> tuple[int, ...] | None:
    """Major and minor of the installed version ("3.6.0+git" -> (3, 6))."""
    text = _installed(distribution)
    if text is None:
        return None
    parts = []
    for piece in text.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def interpreter_numpy_clash() -> str | None:
    """Why Triton's interpreter cannot run with the installed NumPy, or None."""
    triton, numpy = _version("triton"), _version("numpy")
    if triton is None or numpy is None:
        return None
    if triton < INTERPRETER_NUMPY_FIXED_IN and numpy >= INTERPRETER_NUMPY_LIMIT:
        return (
            f"Triton {'.'.join(map(str, triton))}'s interpreter fails with NumPy "
            f"{'.'.join(map(str, numpy))} (it calls int() on one-element arrays): "
            "pip install 'numpy<2.4', or Triton 3.7 or later"
        )
    return None


def triton_unavailable() -> str | None:
    """Why no Triton kernel can run in this process, or None."""
    if importlib.util.find_spec("triton") is None:
        return TRITON_MISSING
    if backend.current().triton_interpreter:
        return interpreter_numpy_clash()
    return None


def triton_interpreted(triton: bool) -> bool:
    """Whether a kernel that declares ``Capabilities(triton=...)`` runs under
    Triton's interpreter in this process: a correctness tool whose speed says
    nothing about the kernel (NumPy on the host, orders of magnitude slower)."""
    return triton and backend.current().triton_interpreter


def triton_unsupported(problem: Problem) -> str | None:
    """Why Triton cannot run ``problem`` correctly here, whatever the kernel, or None."""
    if not backend.current().triton_interpreter:
        return None
    if problem.dtype == "bf16":
        return TRITON_INTERPRETER_BF16
    if problem.dtype in ("fp8e4m3", "fp8e5m2"):
        return TRITON_INTERPRETER_FP8
    return None
