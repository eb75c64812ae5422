"""Reading a file whose path the user named and may name anything.

A saved run (and a ``--shapes`` file, :mod:`gemmreg.timing.shape_documents`)
is input like any other, and its path may name what no run is: a
FIFO (``open`` waits for a writer that never comes), a device (``/dev/zero``
never ends; reading it whole ends in MemoryError), a socket, a symlink loop,
a folder or file the user may not read, or a file far larger than any run
gemmreg writes. :func:`read_saved` refuses each in one line naming the path:
special files and oversized files from ``stat`` alone, before the file is
opened for reading; anything else after at most :data:`MAX_SAVED_BYTES` + 1
bytes, compressed or not.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib
from pathlib import Path

MAX_SAVED_BYTES = 1 << 30
"""The most a saved file (``run.json``, ``check.json``; a ``.gz`` file once
unpacked) may hold. The largest run kept as evidence is 2.1 MB for an 8-point
sweep with every sample; a ``bench`` makes at most 1000 points, about 270 MB
at that rate, so 1 GiB leaves room for runs with many more samples while a
file that would fill the memory of the machine reading it is refused."""

SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDOOR, "a door"),
    (stat.S_ISPORT, "an event port"),
    (stat.S_ISWHT, "a whiteout"),
)
"""What a path may be besides a file or a directory, as a line names it."""


class UnreadableFile(ValueError):
    """A saved file that cannot be read: one line naming the path and why."""


def read_saved(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (unpacked when its name ends in
    ``.gz``), at most ``limit`` (default :data:`MAX_SAVED_BYTES`).
    FileNotFoundError passes through, for the caller to say what is missing
    in its own words; everything else wrong is an :class:`UnreadableFile`."""
    limit = MAX_SAVED_BYTES if limit is None else limit
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as error:  # permission, symlink loop, NUL in the name
        raise UnreadableFile(f"cannot read {path}: {why(error)}") from None
    _refuse_unless_regular(path, info.st_mode)
    _refuse_oversized(path, info.st_size, limit)
    try:
        # O_NONBLOCK: should the file be swapped for a FIFO between the stat
        # and the open, the open returns at once and fstat refuses it below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as error:
        raise UnreadableFile(f"cannot read {path}: {why(error)}") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            _refuse_unless_regular(path, os.fstat(fd).st_mode)
            raw = handle.read(limit + 1)
        except OSError as error:
            raise UnreadableFile(f"cannot read {path}: {why(error)}") from None
    _refuse_oversized(path, len(raw), limit)
    return _gunzip(path, raw, limit) if path.suffix == ".gz" else raw


def read_saved_or_gzipped(path: Path, limit: int | None = None) -> tuple[Path, bytes]:
    """The path read and its bytes (:func:`read_saved`): ``path``, or where it
    does not exist ``path`` + ``.gz``, as committed evidence keeps its runs
    and checks. FileNotFoundError, naming ``path``, when neither exists."""
    try:
        return path, read_saved(path, limit)
    except FileNotFoundError as missing:
        packed = path.with_name(path.name + ".gz")
        try:
            return packed, read_saved(packed, limit)
        except FileNotFoundError:
            raise missing from None


def _gunzip(path: Path, raw: bytes, limit: int) -> bytes:
    """Unpacked, at most ``limit`` bytes of it: a small file that unpacks to
    gigabytes is refused like a large one."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unpacked:
            data = unpacked.read(limit + 1)
    except (gzip.BadGzipFile, EOFError, zlib.error, OSError) as error:
        raise UnreadableFile(f"{path} is not a readable gzip file: {error}") from None
    if len(data) > limit:
        raise UnreadableFile(f"{path} unpacks to more than {limit} bytes: refused")
    return data


def _refuse_unless_regular(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise UnreadableFile(f"{path} is a directory, not a file")
    kind = next((name for test, name in SPECIAL_KINDS if test(mode)), "not a regular file")
    raise UnreadableFile(f"{path} is {kind}, not a regular file: refused unread")


def _refuse_oversized(path: Path, size: int, limit: int) -> None:
    if size > limit:
        raise UnreadableFile(
            f"{path} holds more than {limit} bytes, more than any saved file: refused unread"
        )


def why(error: Exception) -> str:
    """An OSError's reason in words (``Permission denied``), else the error's text."""
    return getattr(error, "strerror", None) or str(error)
