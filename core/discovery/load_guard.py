"""Plugin code that would end or hang gemmreg itself while it loads.

Discovery imports plugins in gemmreg's own process (a process per plugin
would cost a torch import each). Whatever plugin code *raises* there is
contained by :mod:`gemmreg.discovery.loading`, ``sys.exit`` included; two things raise
nothing:

- ``os._exit`` ends the process at once, silently. While plugin code runs,
  :func:`guarded` puts a stand-in in its place that raises :class:`ExitCalled`
  (a ``BaseException``, like ``SystemExit``), which becomes that plugin's
  BROKEN row; the real one is put back afterwards. (A plugin that reaches
  ``posix._exit`` directly, or exits from a thread, is not caught.)
- A hang. A watchdog thread waits :data:`LOAD_TIMEOUT_S` for each plugin; if
  it is still loading then, gemmreg prints one line naming it and exits
  with :data:`EXIT_LOAD_HUNG`. The main thread is stuck in plugin code, so
  nothing can be raised there: the watchdog ends the process with the real
  ``os._exit``. No worker is running at discovery (workers are started
  after it), so none is left behind. A hang that holds the GIL (a C loop)
  starves the watchdog too, and is not caught.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Iterator, Mapping
from typing import NoReturn

LOAD_TIMEOUT_S = 120.0
"""Seconds one plugin may take to import and register. Generous: a plugin
may import torch and Triton on a loaded machine (a few seconds each); a
plugin still loading after two minutes is hung, and waiting longer only
hides it."""
MAX_LOAD_TIMEOUT_S = 86_400.0
"""The longest :data:`LOAD_TIMEOUT_ENV` may ask for: a day is a typo, and a
watchdog thread's wait past ``threading.TIMEOUT_MAX`` would raise in it."""
LOAD_TIMEOUT_ENV = "GEMMREG_LOAD_TIMEOUT_S"
"""Overrides :data:`LOAD_TIMEOUT_S` (seconds, a positive number): for tests."""
EXIT_LOAD_HUNG = 2
"""A plugin that hangs at load is bad input: one line, exit 2."""


class ExitCalled(BaseException):
    """Raised in place of ``os._exit`` while a plugin loads (or while other
    plugin code runs in gemmreg's process: ``doing`` says what it was doing)."""

    def __init__(self, plugin: str, code: object, doing: str = "loading"):
        self.plugin, self.code = plugin, code
        super().__init__(f"plugin {plugin!r} called os._exit({code!r}) while {doing}")


@contextlib.contextmanager
def exit_raises(plugin: str, doing: str = "loading") -> Iterator[None]:
    """While the block runs, ``os._exit`` raises :class:`ExitCalled` (the
    real one is put back however the block ends). Two threads inside at once
    could leave the stand-in in place: plugin code runs under it one plugin at
    a time (discovery loads in turn; :mod:`gemmreg.discovery.plugin_calls`
    holds the output capture's turn)."""
    real_exit = os._exit

    def stand_in(code: int) -> NoReturn:
        raise ExitCalled(plugin, code, doing)

    os._exit = stand_in  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real_exit


def load_timeout(env: Mapping[str, str]) -> float:
    """:data:`LOAD_TIMEOUT_S`, or the number in :data:`LOAD_TIMEOUT_ENV`."""
    from gemmreg.contract.bad_input import UsageError
    from gemmreg.contract.options import decimal

    text = env.get(LOAD_TIMEOUT_ENV, "").strip()
    if not text:
        return LOAD_TIMEOUT_S
    value = decimal(text)
    if not (math.isfinite(value) and 0 < value <= MAX_LOAD_TIMEOUT_S):
        raise UsageError(
            f"{LOAD_TIMEOUT_ENV} must be a number of seconds above 0 up to "
            f"{MAX_LOAD_TIMEOUT_S:g}, got {text[:40]!r}"
        )
    return value


@contextlib.contextmanager
def guarded(plugin: str, timeout_s: float | None) -> Iterator[None]:
    """While the block loads ``plugin``: ``os._exit`` raises :class:`ExitCalled`,
    and a watchdog (unless ``timeout_s`` is None) ends gemmreg if it hangs.

    Enter it *outside* the plugin's output capture: the watchdog writes its
    line to the stderr that was there before plugin code ran."""
    real_exit = os._exit
    stderr = os.dup(2)
    finished = threading.Lock()  # held by whichever of the block and the watchdog ends first
    timer: threading.Timer | None = None

    def give_up() -> None:
        if not finished.acquire(blocking=False):
            return  # the plugin finished loading just now
        line = f"gemmreg: plugin {plugin!r} did not finish loading within {timeout_s:g} s\n"
        with contextlib.suppress(OSError):
            os.write(stderr, line.encode())
        real_exit(EXIT_LOAD_HUNG)

    if timeout_s is not None:
        timer = threading.Timer(timeout_s, give_up)
        timer.daemon = True
        timer.start()
    try:
        with exit_raises(plugin):
            yield
    finally:
        if timer is not None:
            timer.cancel()
        if finished.acquire(blocking=False):  # else the watchdog is ending the process
            os.close(stderr)
