"""Signals sent to gemmreg, told apart from the same exceptions raised by plugin code.

Plugin code runs in gemmreg's own process at discovery, and may raise
``KeyboardInterrupt``, ``SystemExit`` or ``GeneratorExit`` there. Those must
become a BROKEN row for that plugin; a Ctrl-C from the user must still stop
gemmreg. The two raise the same exception, so while plugin code runs a SIGINT
handler records that a real signal arrived (:func:`watching_interrupts`), and
:func:`from_signal` says which case an exception is.

SIGTERM and SIGHUP raise :class:`Terminated` in the main thread
(:func:`install_termination_handlers`). It is a ``KeyboardInterrupt``, so the
worker runner's cleanup kills the worker process groups on the way out and
what already finished is kept exactly as for Ctrl-C; ``gemmreg`` then exits
with 128 + the signal number.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

TERMINATION_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """gemmreg received SIGTERM or SIGHUP."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"terminated by {signal.Signals(signum).name}")


_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None
"""What ``signal.getsignal`` returns: a handler, SIG_DFL or SIG_IGN, or None
(one not installed from Python)."""

_state = {"watching": 0, "sigint_seen": False, "terminated_by": 0}


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _state["sigint_seen"] = True
    raise KeyboardInterrupt


def _on_termination(signum: int, frame: FrameType | None) -> None:
    _state["terminated_by"] = signum
    raise Terminated(signum)


def install_termination_handlers() -> None:
    """Make SIGTERM and SIGHUP raise :class:`Terminated` (a signal set to be
    ignored, as under ``nohup``, stays ignored). Forgets any earlier one: each
    command starts unterminated (``cli.main`` can run many in one process)."""
    _state["terminated_by"] = 0
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in TERMINATION_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _on_termination)


def termination_signal() -> int:
    """The SIGTERM or SIGHUP that ended this run, or 0."""
    return int(_state["terminated_by"])


@contextlib.contextmanager
def watching_interrupts() -> Iterator[None]:
    """While plugin code runs here, remember whether a real SIGINT arrived.

    Outside the main thread, or where SIGINT has a handler of someone else's,
    nothing is installed, and :func:`from_signal` takes every
    KeyboardInterrupt for a real one (the safe side: it stops gemmreg)."""
    previous = None
    if threading.current_thread() is threading.main_thread():
        handler = signal.getsignal(signal.SIGINT)
        if handler is signal.default_int_handler or handler is signal.SIG_IGN:
            previous = handler
    if previous is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    outer = dict(_state)
    if previous is not None:
        _state["watching"] = int(_state["watching"]) + 1
        _state["sigint_seen"] = False
    try:
        yield
    finally:
        if previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous)
        if previous is not None:
            _state["watching"] = outer["watching"]
            _state["sigint_seen"] = bool(outer["sigint_seen"]) or bool(_state["sigint_seen"])


def from_signal(error: BaseException) -> bool:
    """True when ``error`` is gemmreg being interrupted or terminated (let it
    through); False when plugin code raised it (contain it as that plugin's failure)."""
    if isinstance(error, Terminated):
        return error.signum == _state["terminated_by"]
    if isinstance(error, KeyboardInterrupt):
        return bool(_state["sigint_seen"]) or not _state["watching"]
    return False


DEFERRED_SIGNALS = (signal.SIGINT, *TERMINATION_SIGNALS)
"""What :func:`deferred` holds back: Ctrl-C and the termination signals, each
of which would otherwise raise in the middle of a save."""


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP until the block ends, then act on the
    first that came as it would have acted (raise, or end the process).

    A save of several files is one unit: a second Ctrl-C that raised between
    ``run.json`` and the tables left them telling two different runs. Outside
    the main thread signals cannot be handled here (nor do they arrive there),
    so the block simply runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous: dict[int, _Handler] = {
        signum: signal.getsignal(signum) for signum in DEFERRED_SIGNALS
    }

    def hold(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    for signum, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        if pending:
            _deliver(pending[0], previous[pending[0]])


def _deliver(signum: int, handler: _Handler) -> None:
    """Act on a signal held back by :func:`deferred` as its handler would have."""
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signum)
