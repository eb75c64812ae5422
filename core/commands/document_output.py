"""gemmreg's own output on stdout, and nothing else there.

Plugins are imported into gemmreg's process, and what they print while they
load is captured (:mod:`gemmreg.discovery.capture`). A thread a plugin starts
at import goes on printing afterwards, at any moment: its lines landed in the
middle of ``check --format json``, which no longer parsed. So for the whole of
a command, gemmreg writes its tables and documents to a private duplicate of
the stdout it was given (:func:`emit`), while descriptor 1 and ``sys.stdout``
point at stderr: a stray write from anyone else, Python or C, goes to stderr
with gemmreg's progress lines, and stdout holds exactly what gemmreg printed.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TextIO

from gemmreg.commands.closed_streams import DroppedWhenClosed
from gemmreg.discovery.capture import writes_to

_document: list[TextIO | DroppedWhenClosed] = []
"""Where :func:`emit` writes, while :func:`kept_apart` holds (innermost last)."""


def emit(text: str) -> None:
    """Print ``text`` (a table or a document) on gemmreg's stdout."""
    stream = _document[-1] if _document else sys.stdout
    print(text, file=stream, flush=True)


@contextlib.contextmanager
def kept_apart() -> Iterator[None]:
    """Within the block, :func:`emit` writes to the stdout there was, and every
    other write to descriptor 1 or ``sys.stdout`` goes to stderr.

    Where ``sys.stdout`` is a stand-in (pytest's ``capsys``, a caller's
    ``redirect_stdout``), documents go to that stand-in, and ``sys.stdout``
    becomes ``sys.stderr`` for the block. Everything is put back afterwards:
    ``cli.main`` may run many commands in one process. A block inside another
    changes nothing: ``gemmreg``'s own process enters one around the whole
    command and its exit (:func:`gemmreg.cli.run`), so that a thread still
    writing after the command cannot reach stdout either."""
    if _document:  # inside another: stdout is already kept apart
        yield
        return
    given = sys.stdout
    with contextlib.suppress(Exception):
        given.flush()
    document: TextIO = given
    private: TextIO | None = None
    saved_fd1: int | None = None
    try:
        saved_fd1 = os.dup(1)
        os.fstat(2)  # redirect only where there is a stderr to redirect to
    except OSError:  # fd 1 or 2 closed by whoever started us: nothing to move
        if saved_fd1 is not None:
            os.close(saved_fd1)
        saved_fd1 = None
    if saved_fd1 is not None:
        if writes_to(given, 1):
            private = open(  # noqa: SIM115 (closed below)
                os.dup(1),
                "w",
                encoding=getattr(given, "encoding", None) or "utf-8",
                errors=getattr(given, "errors", None) or "strict",
            )
            document = private
        os.dup2(2, 1)
    _document.append(DroppedWhenClosed(document))  # a reader gone: the rest is dropped
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _document.pop()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        sys.stdout = given
        if private is not None:
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to flush to
                private.close()
        if saved_fd1 is not None:
            os.dup2(saved_fd1, 1)
            os.close(saved_fd1)


@contextlib.contextmanager
def on_stdout() -> Iterator[None]:
    """``sys.stdout`` is gemmreg's stdout again for the block: for gemmreg's
    own code that prints there itself (argparse's ``--help`` and usage)."""
    if not _document:
        yield
        return
    saved = sys.stdout
    sys.stdout = _document[-1]
    try:
        yield
    finally:
        sys.stdout = saved
