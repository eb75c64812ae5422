"""Plugin code called after discovery, in gemmreg's own process: a kernel's
``available()`` and its capability ``constraint``.

They run where gemmreg builds its tables, so whatever they do must end as
that kernel's answer and nothing more, as at load
(:mod:`gemmreg.discovery.load_guard`): their output is captured, ``os._exit``
raises instead of ending gemmreg silently, and a call that raises anything,
``KeyboardInterrupt`` and ``SystemExit`` included, is a reason. Each call runs
in a thread of its own, and gemmreg waits for it at most
:func:`~gemmreg.discovery.load_guard.load_timeout`: a call that hangs becomes
a reason too, and the rest of the table goes on (the thread is left behind,
a daemon, stuck where the plugin put it). Being another thread is also what
tells a plugin's own ``KeyboardInterrupt`` from a real Ctrl-C: a signal is
only ever delivered to the main thread, which is waiting here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

from gemmreg.discovery import capture, load_guard

_T = TypeVar("_T")

_inside = threading.local()
"""Set in the thread that runs a call: one the plugin makes from there (a
kernel's ``available()`` asking another's) runs directly, since the waiting
thread holds the capture's turn the new call would wait for."""


class Misbehaved(Exception):
    """The call raised, called ``os._exit`` or hung: :attr:`reason` says which,
    and :attr:`hung` is True for a hang (its thread is still running, and
    asking again would cost another timeout)."""

    def __init__(self, reason: str, *, hung: bool = False):
        self.reason = reason
        self.hung = hung
        super().__init__(reason)


def call(plugin: str, what: str, function: Callable[[], _T]) -> _T:
    """``function()``, contained; ``what`` names it in a reason ("its
    availability check").

    :raises Misbehaved: It raised (the reason names the exception), called
        ``os._exit``, or had not returned within the load timeout.
    """
    if getattr(_inside, "active", False):
        return _run_here(plugin, what, function)
    timeout_s = load_guard.load_timeout(os.environ)
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        _inside.active = True
        try:
            outcome.append((True, _run_here(plugin, what, function)))
        except BaseException as error:  # every one of them is the plugin's: carried back
            outcome.append((False, error))

    with capture.captured_output(), load_guard.exit_raises(plugin, f"running {what}"):
        thread = threading.Thread(target=run, name=f"gemmreg: {plugin} {what}", daemon=True)
        thread.start()
        thread.join(timeout_s)  # a real Ctrl-C raises here, in the main thread
    if not outcome:
        raise Misbehaved(f"{what} did not return within {timeout_s:g} s", hung=True)
    ok, value = outcome[0]
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]


def _run_here(plugin: str, what: str, function: Callable[[], _T]) -> _T:
    """``function()`` in this thread, whatever it raises made a :class:`Misbehaved`."""
    from gemmreg.discovery.plugin_errors import describe

    try:
        return function()
    except Misbehaved:
        raise
    except load_guard.ExitCalled as error:  # its message is the whole story
        raise Misbehaved(str(error)) from None
    except BaseException as error:  # sys.exit and KeyboardInterrupt are the plugin's here
        raise Misbehaved(f"{what} raised {describe(error)}") from None
