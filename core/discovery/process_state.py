"""What a plugin's import may not change in gemmreg's own process, besides
torch's switches (:mod:`gemmreg.discovery.torch_state`).

Plugins are imported in gemmreg's process, and each of these outlives the
import and acts on everything after it:

- the environment: workers inherit it, so a plugin that set
  ``GEMMREG_BLOCK_PLUGINS`` blocked another plugin in every worker (35 error
  rows for a kernel that had loaded fine here);
- the working directory: ``--out runs/x`` is relative to it, so the run was
  saved somewhere else;
- ``sys.path``: a plugin that dropped site-packages left every plugin loaded
  after it unable to import;
- the handlers of SIGINT, SIGTERM and SIGHUP: one set to be ignored made a
  running ``compare`` ignore the ``kill`` meant to end it.

:func:`current` reads them before a plugin loads and :func:`differences`
after; :func:`restore` puts them back. Discovery refuses the plugin, as it
does one that changes torch's state: its import did what no plugin may do,
and keeping its kernels would run them in a process it no longer changes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

import attrs

SET_BY_TORCH = frozenset({"CUDA_MODULE_LOADING"})
"""Variables torch sets itself, when unset, as it first initialises CUDA
(``torch.cuda._lazy_init``: ``LAZY``): a plugin whose import is the first to
touch the GPU sets it without meaning anything by it, and it chooses no
kernel. Only its first setting is let pass; a change of its value is not."""

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that end gemmreg, each with the handler gemmreg gave it."""


@attrs.frozen(kw_only=True)
class ProcessState:
    environ: dict[str, str]
    cwd: str | None
    """None where the working directory was already gone."""
    path: tuple[str, ...]
    handlers: dict[int, object]


def current() -> ProcessState:
    """Read the environment, working directory, ``sys.path`` and signal handlers now."""
    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    return ProcessState(
        environ=dict(os.environ),
        cwd=cwd,
        path=tuple(sys.path),
        handlers={signum: signal.getsignal(signum) for signum in SIGNALS},
    )


def _handler_name(handler: object) -> str:
    if handler is signal.SIG_IGN:
        return "ignored"
    if handler is signal.SIG_DFL:
        return "the default"
    if handler is signal.default_int_handler:
        return "Python's KeyboardInterrupt"
    if handler is None:
        return "one not set from Python"
    return getattr(handler, "__qualname__", None) or type(handler).__name__


def differences(now: ProcessState, before: ProcessState) -> list[str]:
    """One phrase per thing that differs, e.g. ``environment variable X set``.
    Values of the environment are not shown: they may be secrets."""
    found = []
    for name in sorted(set(now.environ) | set(before.environ)):
        if name not in before.environ:
            if name not in SET_BY_TORCH:
                found.append(f"environment variable {name} set")
        elif name not in now.environ:
            found.append(f"environment variable {name} removed")
        elif now.environ[name] != before.environ[name]:
            found.append(f"environment variable {name} changed")
    if now.cwd != before.cwd:
        found.append(f"working directory {now.cwd} (was {before.cwd})")
    if now.path != before.path:
        removed = [p for p in before.path if p not in now.path]
        added = [p for p in now.path if p not in before.path]
        what = (
            f"{len(removed)} entries removed, {len(added)} added"
            if removed or added
            else "reordered"
        )
        found.append(f"sys.path {what}")
    for signum in SIGNALS:
        if now.handlers[signum] != before.handlers[signum]:
            name = signal.Signals(signum).name
            found.append(
                f"{name} handler {_handler_name(now.handlers[signum])} "
                f"(was {_handler_name(before.handlers[signum])})"
            )
    return found


def restore(before: ProcessState) -> None:
    """Put back what :func:`current` read (signal handlers only from the main
    thread, the one place Python sets them)."""
    for name in set(os.environ) - set(before.environ):
        del os.environ[name]
    for name, value in before.environ.items():
        if os.environ.get(name) != value:
            os.environ[name] = value
    if before.cwd is not None:
        with contextlib.suppress(OSError):  # removed meanwhile: nowhere to go back to
            os.chdir(before.cwd)
    sys.path[:] = before.path
    if threading.current_thread() is threading.main_thread():
        for signum, handler in before.handlers.items():
            if handler is not None and signal.getsignal(signum) != handler:
                signal.signal(signum, handler)  # type: ignore[arg-type]
