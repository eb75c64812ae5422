"""``GEMMREG_TRACE=1``: where a command's wall time goes, as stamped lines on
stderr (worker start-up, each task sent and finished, what a worker said it
was doing). A comparison's wall time is mostly processes starting and
waiting, not timing; this shows which. Off by default: nothing is printed
and nothing is measured.
"""

from __future__ import annotations

import os
import sys
import time

_START = time.monotonic()
ENV = "GEMMREG_TRACE"


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def trace(text: str) -> None:
    """One stamped line on stderr (seconds since gemmreg started), when tracing."""
    if enabled():
        sys.stderr.write(f"[trace {time.monotonic() - _START:8.2f}s] {text}\n")
        sys.stderr.flush()
