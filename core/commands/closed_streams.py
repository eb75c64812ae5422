"""stdout and stderr whose reader went away: the work goes on.

``gemmreg bench ... 2>&1 | head`` closes the pipe under the progress lines
after a dozen of them. A progress line is a courtesy, not the work: were the
failed write to end the command, the sweep would stop after a point or two,
exit as if all were well, and leave a partial run that does not say why.
So a write to a closed stream is dropped, and every later one (the stream's
file descriptor is pointed at ``/dev/null``, so the interpreter's last flush
does not complain either); the command runs to its end and exits with its
own code. The same holds for stdout, which carries the table at the end: the
run was saved after every point before any of it is printed (``report RUN``
prints it again), and a ``--fail-on`` gate or a failed check must still
decide the exit code, not the reader that stopped reading.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO


class DroppedWhenClosed:
    """``stream``, whose writes and flushes are dropped once its reader has gone."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self.stream.write(text)
            except OSError as error:
                self._lost(error)
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self.stream.flush()
            except OSError as error:
                self._lost(error)

    def _lost(self, error: OSError) -> None:
        if not isinstance(error, BrokenPipeError) and error.errno != errno.EPIPE:
            raise error
        self.reader_gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            nowhere = os.open(os.devnull, os.O_WRONLY)
            os.dup2(nowhere, self.stream.fileno())
            os.close(nowhere)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextlib.contextmanager
def kept_going() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`DroppedWhenClosed` for
    the block (a command), the streams they wrap back after it."""
    before = sys.stdout, sys.stderr
    sys.stdout = DroppedWhenClosed(before[0])
    sys.stderr = DroppedWhenClosed(before[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = before
