"""No worker outlives its gemmreg, however gemmreg ends.

A worker hung in a kernel never reads or writes its pipes, so it would sleep
forever under PID 1 once gemmreg is gone: SIGKILL leaves no time to clean up,
and SIGTERM ends gemmreg before its ``finally`` blocks run unless it is
handled (:mod:`gemmreg.discovery.interrupts` handles it). Two ties hold the worker:

- The parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``), set
  by the worker first thing: the kernel kills it when its parent dies, even
  with a C extension spinning and holding the GIL.
- A lifeline pipe whose only write end gemmreg holds and never writes. When
  gemmreg dies, for any reason, the worker's read end reaches end of file and
  a watchdog thread kills the worker's process group. It also covers workers
  started under a prefix (compute-sanitizer), whose parent is not gemmreg,
  and systems without ``prctl``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading

LIFELINE_ENV = "GEMMREG_LIFELINE_FD"
"""The descriptor number of the lifeline's read end, in a worker's environment."""
PR_SET_PDEATHSIG = 1
"""From <linux/prctl.h>."""

_read_end: list[int] = []


def read_end() -> int:
    """This process's lifeline (made once; the write end is never written or closed)."""
    if not _read_end:
        read_fd, _write_fd = os.pipe()  # both close-on-exec: only pass_fds hands one on
        _read_end.append(read_fd)
    return _read_end[0]


def set_parent_death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _die() -> None:
    """Kill this worker and whatever shares its process group (its own
    children, or the sanitizer it runs under), then this process."""
    with contextlib.suppress(OSError):
        if os.getpgrp() == os.getsid(0):  # a session of our own, as gemmreg starts us
            os.killpg(os.getpgrp(), signal.SIGKILL)
    os._exit(128 + signal.SIGKILL)


def _watch(fd: int) -> None:
    while True:
        try:
            if not os.read(fd, 1):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    _die()


def hold_on(environ: dict[str, str] | os._Environ[str] = os.environ) -> None:
    """In a worker: die with gemmreg (both ties above). A no-op when not started
    by gemmreg (no lifeline in the environment)."""
    value = environ.get(LIFELINE_ENV, "")
    if not value.isdigit():
        return
    fd = int(value)
    try:
        os.fstat(fd)
    except OSError:  # a prefix that closed it: the parent-death signal still holds
        fd = -1
    set_parent_death_signal()
    if fd >= 0:
        threading.Thread(target=_watch, args=(fd,), name="gemmreg-lifeline", daemon=True).start()
