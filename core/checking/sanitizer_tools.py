"""The sanitizer tools ``gemmreg check --sanitize`` knows, and where they can run.

Some kernel bugs leave the numbers right on a normal schedule: a missing
barrier races on shared memory, a read past the end of an input lands in the
rounding of its allocation and is multiplied by zero, stale shared memory is
multiplied by zero padding. NVIDIA's compute-sanitizer sees the first two;
nothing of NVIDIA's sees the third (initcheck covers global memory only), so
gemmreg adds its own check for it, ``smempoison`` (:mod:`gemmreg.checking.smem_poison`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gemmreg.contract.bad_input import did_you_mean
from gemmreg.contract.runtime import (
    SANITIZING_ENV as SANITIZING_ENV,  # at home where plugins read it
)
from gemmreg.instruments import cuda_tools

COMPUTE_SANITIZER_TOOLS: tuple[str, ...] = ("memcheck", "racecheck", "synccheck", "initcheck")
"""compute-sanitizer's own tools, run with ``--tool``."""
SMEM_POISON = "smempoison"
"""gemmreg's own check: shared memory filled with 0xFF (NaN) before each launch."""
TOOLS: tuple[str, ...] = (*COMPUTE_SANITIZER_TOOLS, SMEM_POISON)
DEFAULT_TOOLS: tuple[str, ...] = TOOLS
"""What ``--sanitize`` with no value runs: all of them. smempoison is in because
shared memory was seen to keep its contents from one launch to the next on the
H200: a tile kernel that leaves its K-tail entries of shared memory unwritten
(K=7, one partial tile) gave right values on 2 of 3 plain runs, and NaN in all
4087 outputs on each of 3 runs after the poison kernel."""

EXECUTABLE = "compute-sanitizer"
FALLBACK_ROOTS: tuple[str, ...] = ("/usr/local/cuda",)
"""Where the CUDA toolkit usually is when compute-sanitizer is not on PATH."""
PRINT_LIMIT = 100
"""Reports printed per process; the summary line still counts them all."""

NO_CACHING_ENV = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
"""memcheck knows allocations by their cudaMalloc bounds. torch's caching
allocator carves tensors out of pooled 2 MB segments, so a read a few bytes
past a tensor lands inside the segment and is invisible; with caching off each
tensor is its own cudaMalloc, and the same read is reported (the H200 probe
saw it: '1 bytes after the nearest allocation ... of size 10,980 bytes')."""

ROCM_REASON = (
    "unsupported on ROCm: compute-sanitizer is NVIDIA-only; ROCm's nearest tool, "
    "AddressSanitizer for HIP, needs kernels rebuilt with -fsanitize=address and xnack+, "
    "which run-time compiled plugin kernels cannot be; racecheck, synccheck and initcheck "
    "have no ROCm counterpart"
)
CPU_REASON = "the CPU backend (Triton interpreter, host BLAS) has no GPU to sanitize"


def in_words(names: Sequence[str]) -> str:
    """``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def default_tools_in_words() -> str:
    """What ``--sanitize`` (and ``--gemmreg-sanitize``) runs with no value, for
    their help, from :data:`DEFAULT_TOOLS`."""
    others = [tool for tool in TOOLS if tool not in DEFAULT_TOOLS]
    if not others:
        return "all of them by default"
    return f"{in_words(DEFAULT_TOOLS)} by default; {in_words(others)} on request"


class UnknownToolError(ValueError):
    """A tool name ``--sanitize`` does not know: reported in one line."""


def parse_tools(value: str | None) -> tuple[str, ...]:
    """``None``, ``""`` or ``all`` give the default set; else a comma-separated list."""
    if value is None or value.strip() in ("", "all"):
        return DEFAULT_TOOLS
    chosen = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in TOOLS]
    if unknown or not chosen:
        raise UnknownToolError(
            f"unknown sanitizer tool {', '.join(unknown) or value!r}: choose from "
            f"{', '.join(TOOLS)} (or all); name plugins before --sanitize, or write --sanitize=TOOLS"
            + (did_you_mean(unknown[0], TOOLS) if unknown else "")
        )
    return tuple(dict.fromkeys(chosen))


def locate() -> Path | None:
    """compute-sanitizer on PATH, else under $CUDA_HOME/bin or /usr/local/cuda/bin."""
    return cuda_tools.locate(EXECUTABLE, FALLBACK_ROOTS)


def version(executable: Path) -> str:
    """The version line of ``compute-sanitizer --version`` (for the manifest)."""
    return cuda_tools.version(executable, _version_line)


def _version_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("Version")]
    return lines[0] if lines else output.strip()[-200:]


def manifest_entry(tools: Sequence[str], executable: Path | None) -> dict[str, Any]:
    """What a saved check's manifest records of its sanitizer pass: the tools,
    which compute-sanitizer, the environment of its workers and its command."""
    return {
        "tools": list(tools),
        "executable": str(executable) if executable else None,
        "version": version(executable) if executable else None,
        "environment": NO_CACHING_ENV,
        "command": command(executable or EXECUTABLE, "TOOL", Path("LOG")),
    }


def unavailable_reason(tool: str, backend_kind: str) -> str | None:
    """Why ``tool`` cannot run on this backend, or None."""
    if backend_kind == "cpu":
        return CPU_REASON
    if tool == SMEM_POISON:
        return None  # gemmreg's own kernel: NVRTC or hiprtc, like the HIP plugins
    if backend_kind == "rocm":
        return ROCM_REASON
    if locate() is None:
        return (
            f"{EXECUTABLE} not found (looked on PATH, in $CUDA_HOME/bin and "
            "/usr/local/cuda/bin); it comes with the CUDA toolkit"
        )
    return None


def command(executable: Path | str, tool: str, log_file: Path) -> list[str]:
    """The prefix a worker runs under for one tool, its report going to ``log_file``.

    ``application-only``: Triton starts ptxas as a child, which is not under test.
    ``--destroy-on-device-error kernel``: after a precise memory error only that
    kernel is stopped, so the cases after it in the same process still run.
    """
    return [
        str(executable),
        "--tool",
        tool,
        "--log-file",
        str(log_file),
        "--print-limit",
        str(PRINT_LIMIT),
        "--target-processes",
        "application-only",
        "--destroy-on-device-error",
        "kernel",
    ]


def worker_env(tool: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a sanitized worker: torch's caching allocator off
    (compute-sanitizer tools only), and ``GEMMREG_SANITIZING`` naming the tool."""
    extra = {} if tool == SMEM_POISON else NO_CACHING_ENV
    return {**(os.environ if base is None else base), **extra, SANITIZING_ENV: tool}
