"""Will a problem's operands fit on the device at all? Decided in the parent,
before any worker starts, so that a mistyped 10^16-element shape is one line
naming the bytes, not a failed allocation in every timing process."""

from __future__ import annotations

import os

from gemmreg.contract.backend import BackendInfo
from gemmreg.contract.records import Problem
from gemmreg.contract.traffic import footprint_bytes

CPU_FALLBACK_BYTES = 1 << 40
"""Where the host cannot say how much RAM it has: a cap generous enough for any
problem the CPU backend could finish (1 TiB)."""


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


def memory_refusal(problem: Problem, info: BackendInfo) -> str | None:
    """Why ``problem``'s A, B and C can never fit in the device's memory, or
    None when they can: each in its own dtype (an fp8 or int8 problem's C in
    its output dtype), every item of a batch, one B per member of a grouped
    problem (:func:`gemmreg.contract.traffic.footprint_bytes`)."""
    needed = footprint_bytes(problem)
    total, what = device_bytes(info)
    if needed <= total:
        return None
    plain = problem.batch == 1 and not problem.groups
    shown = f"{problem.shape} {problem.number_format}" if plain else problem.label
    return f"shape {shown} needs {format_bytes(needed)} ({needed} bytes) for A, B and C; {what}"


def format_bytes(count: int) -> str:
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    value, unit = float(count), 0
    while value >= 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    return f"{value:.4g} {units[unit]}"
