"""Will a problem's operands fit on the device at all? Decided in the parent,
before any worker starts, so that a mistyped 10^16-element shape is one line
naming the bytes, not a failed allocation in every timing process."""

from __future__ import annotations

import os

from gemmreg.contract.backend import BackendInfo
from gemmreg.contract.records import ELEMENT_BYTES

CPU_FALLBACK_BYTES = 1 << 40
"""Where the host cannot say how much RAM it has: a cap generous enough for any
problem the CPU backend could finish (1 TiB)."""


def operand_bytes(shape: tuple[int, int, int], dtype: str, out_dtype: str | None = None) -> int:
    """Bytes of A (m x k) and B (k x n) in ``dtype``, and C (m x n) in
    ``out_dtype`` (fp8's and int8's C; None: ``dtype`` too)."""
    m, n, k = shape
    return (m * k + k * n) * ELEMENT_BYTES[dtype] + m * n * ELEMENT_BYTES[out_dtype or dtype]


def device_bytes(info: BackendInfo) -> tuple[int, str]:
    """The device's whole memory, and what it is, in words.

    The whole memory, not what is free now: the parent must not create a GPU
    context of its own (it would hold memory for the whole run), and what is
    free here is not what a worker will find. The decision only refuses what
    can never fit; a problem that fits the device but not the moment still
    gets its own error row from the worker."""
    if info.is_gpu:
        import torch

        total = int(torch.cuda.get_device_properties(0).total_memory)
        return total, f"{info.device_name} has {format_bytes(total)}"
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return CPU_FALLBACK_BYTES, f"the CPU cap is {format_bytes(CPU_FALLBACK_BYTES)}"
    return total, f"this host has {format_bytes(total)} of RAM"


def memory_refusal(shape: tuple[int, int, int], dtype: str, info: BackendInfo) -> str | None:
    """Why A, B and C of this shape and dtype can never fit in the device's
    memory, or None when they can."""
    needed = operand_bytes(shape, dtype)
    total, what = device_bytes(info)
    if needed <= total:
        return None
    m, n, k = shape
    return (
        f"shape {m}x{n}x{k} {dtype} needs {format_bytes(needed)} ({needed} bytes) "
        f"for A, B and C; {what}"
    )


def format_bytes(count: int) -> str:
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    value, unit = float(count), 0
    while value >= 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    return f"{value:.4g} {units[unit]}"
