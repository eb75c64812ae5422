"""Where a CUDA command-line tool is (compute-sanitizer, ncu, nsys): one
search, so the sanitizer and the profiler hooks cannot disagree about it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path


def locate(tool: str, fallback_roots: Sequence[str]) -> Path | None:
    """The tool on PATH, else under $CUDA_HOME/bin, $CUDA_PATH/bin or each of
    ``fallback_roots``/bin (toolkits install there without touching PATH)."""
    found = shutil.which(tool)
    if found:
        return Path(found)
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), *fallback_roots):
        if root:
            candidate = Path(root) / "bin" / tool
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    return None


def version(executable: Path, pick: Callable[[str], str]) -> str:
    """The tool's version for the manifest: ``pick`` chooses it from the output
    of ``TOOL --version`` (each tool words it its own way); a tool that cannot
    say gets ``unknown (why)``, never an exception."""
    try:
        done = subprocess.run(
            [str(executable), "--version"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"unknown ({type(error).__name__}: {error})"
    return pick(done.stdout)
