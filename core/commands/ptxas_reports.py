"""What ptxas says of a kernel's PTX (:func:`gemmreg.testing.ptxas_report`),
for plugin tests that compile natively on a machine without a GPU.

Why: ptxas can quietly undo a kernel's design and say so only in its info
lines. A Hopper kernel whose ``wgmma`` ptxas serialises (C7512, C7515: each
product waited for before the next) still compiles, still passes every
correctness case, and runs well behind what its source promises; a spilled
accumulator shows only in the spill counts. A test that reads the report
catches that where the kernel is written, with no GPU, and names the reason.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path
from typing import TypedDict


class PtxasReport(TypedDict):
    """What ptxas reported of one PTX module (plain data: a native script prints it as JSON)."""

    performance: list[str]
    """Its "Potential Performance Loss" and other ``C75xx`` info lines, each
    without the function's name (``(C7512) ... wgmma.mma_async instructions
    are serialized due to insufficient register resources``)."""
    serialized: bool
    """Whether ptxas serialised ``wgmma`` instructions anywhere in the module."""
    registers: int
    """Registers per thread, the largest of the module's functions."""
    spill_bytes: int
    """Bytes of spill stores and loads, summed over the module's functions."""
    log: str
    """ptxas's whole ``-v`` output."""


def ptxas_report(ptx: str, arch: int = 90) -> PtxasReport:
    """Assemble ``ptx`` for ``sm_<arch>a`` with the ptxas the installed Triton
    itself runs for that target, verbosely, and return what it said.

    Call it in a :func:`~gemmreg.testing.native_compile` script, on
    ``compiled.asm["ptx"]`` of :func:`~gemmreg.testing.compile_natively` or
    of ``triton.compile``. Raises ``CalledProcessError`` where ptxas refuses
    the module."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "kernel.ptx"
        source.write_text(ptx)
        done = subprocess.run(
            [_ptxas(arch), f"-arch=sm_{arch}a", "-v", str(source), "-o", str(source) + ".cubin"],
            capture_output=True,
            text=True,
            check=True,
        )
    log = done.stdout + done.stderr
    performance = sorted(
        {
            re.sub(
                r" (?:in )?around line \d+| (?:in|for) (?:the )?function '[^']*'",
                "",
                line.split("info    : ", 1)[-1],
            )
            for line in log.splitlines()
            if re.search(r"\(C75\d\d\)", line)
        }
    )
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    return PtxasReport(
        performance=performance,
        serialized=any("serialized" in line for line in performance),
        registers=max((int(r) for r in re.findall(r"Used (\d+) registers", log)), default=0),
        spill_bytes=sum(int(s) + int(lo) for s, lo in spills),
        log=log,
    )


def _ptxas(arch: int) -> str:
    from triton.backends.nvidia import compiler as nvidia

    try:  # Triton 3.6 on takes the target (3.9 brings a newer ptxas beside the old)
        tool = nvidia.get_ptxas(arch)
    except TypeError:  # Triton 3.4 takes none: it ships one ptxas
        tool = nvidia.get_ptxas()
    return str(getattr(tool, "path", tool))
