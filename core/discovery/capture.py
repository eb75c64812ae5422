"""Keep what plugin code prints out of gemmreg's own output.

``gemmreg list --format json`` and ``check --format json`` are read by
machines: one ``print`` at a plugin's import would make them unparseable. So
while a plugin is imported and registers, file descriptors 1 and 2 *and*
``sys.stdout``/``sys.stderr`` point at a temporary file; what landed there is
kept with that plugin's row instead.

A process has one pair of descriptors, and several threads run plugin code
(one per GPU under ``--devices``). So captures take turns (:data:`_TURN`): two
at once would each restore the other's sink, and everything gemmreg printed
after them, its JSON included, would go nowhere. gemmreg's own lines from
other threads wait for the turn to end (:func:`own_output`), so that they
land on the terminal, not in a plugin's capture.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
import threading
from collections.abc import Iterator

import attrs

OUTPUT_CHARS = 4000
"""How much of a plugin's output is kept (the end of it): enough to read, never a flood."""


_TURN = threading.RLock()
"""Held while descriptors 1 and 2 point at a capture's sink. Re-entrant: a
capture inside a capture (a plugin's import checking its availability) nests."""


@contextlib.contextmanager
def own_output() -> Iterator[None]:
    """Print gemmreg's own lines inside this block: they wait until no
    capture holds the descriptors, and none starts until they are written."""
    with _TURN:
        yield


@attrs.define
class Captured:
    text: str = ""


def _flush_c_stdio() -> None:
    """Flush C's stdio buffers, so a C extension's printf lands in the capture."""
    with contextlib.suppress(OSError, AttributeError):  # no C library handle here
        ctypes.CDLL(None).fflush(None)


def _flush_python_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def writes_to(stream: object, fd: int) -> bool:
    """Whether ``stream`` writes to descriptor ``fd`` (False for a stand-in without one)."""
    try:
        return stream.fileno() == fd  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return False


@contextlib.contextmanager
def captured_output() -> Iterator[Captured]:
    """Everything written to stdout or stderr inside the block, at any level,
    goes to ``Captured.text`` instead (its last :data:`OUTPUT_CHARS`)."""
    with _TURN:
        yield from _captured_alone()


def _captured_alone() -> Iterator[Captured]:
    captured = Captured()
    saved_streams = (sys.stdout, sys.stderr)
    _flush_python_streams()
    _flush_c_stdio()
    with tempfile.TemporaryFile() as sink:
        saved_fds: list[int | None] = []
        for fd in (1, 2):
            try:
                saved_fds.append(os.dup(fd))
            except OSError:  # closed by whoever started us: nothing to protect
                saved_fds.append(None)
            os.dup2(sink.fileno(), fd)
        stream = open(  # noqa: SIM115 (closed below, after plugin code is done with it)
            sink.fileno(), "w", encoding="utf-8", errors="replace", closefd=False
        )
        # The process's own streams write to fds 1 and 2, now the sink: they stay,
        # so a library that keeps a reference to one (a logging handler made at
        # import) keeps a working stream. Only stand-ins (pytest's capsys) are swapped.
        if not writes_to(sys.stdout, 1):
            sys.stdout = stream
        if not writes_to(sys.stderr, 2):
            sys.stderr = stream
        try:
            yield captured
        finally:
            _flush_python_streams()
            _flush_c_stdio()
            sys.stdout, sys.stderr = saved_streams
            with contextlib.suppress(Exception):
                stream.close()
            for fd, saved in zip((1, 2), saved_fds, strict=True):
                if saved is not None:
                    os.dup2(saved, fd)
                    os.close(saved)
                else:
                    os.close(fd)
            sink.seek(0)
            text = sink.read().decode("utf-8", errors="replace")
            captured.text = text[-OUTPUT_CHARS:]
