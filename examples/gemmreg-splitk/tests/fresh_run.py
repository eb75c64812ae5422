"""Running a script in a fresh Python, as several split-K test modules do.

A plain module, not a conftest.py: gemmreg's own tests import their
conftest by name, and one pytest process runs both suites (scripts/test.sh)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def run_fresh(script: str, env: dict[str, str] | None = None, timeout: float | None = None) -> Any:
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
