"""What several of the split-K test modules share."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest


def _run_fresh(script: str, env: dict[str, str] | None = None, timeout: float | None = None) -> Any:
    """Run ``script`` in a fresh Python and return the JSON its last line prints.

    Fresh, so that gemmreg decides the backend (and, with no GPU, switches
    Triton's interpreter on) before triton is imported, and so that a kernel
    the interpreter crashes on takes down that process, not pytest's."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def run_fresh() -> Callable[..., Any]:
    """:func:`_run_fresh`, for the modules' own fixtures."""
    return _run_fresh
