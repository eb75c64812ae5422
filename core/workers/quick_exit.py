"""Leaving a process that imported torch without the interpreter's teardown.

Unloading torch, Triton and a GPU context module by module took about a
second in gemmreg's own process and seconds per worker, after every result
had been written. Exit handlers still run (a plugin may save a tuning cache
in one; temporary folders are removed by one), buffered output is flushed,
and then the process ends; the OS frees the rest.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from typing import NoReturn


def leave(code: int) -> NoReturn:
    """Run the exit handlers, flush stdout and stderr, and end with ``code``."""
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
