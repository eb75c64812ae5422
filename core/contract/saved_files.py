"""Reading a file whose path the user named and may name anything.

A saved run (and a ``--shapes`` file, :mod:`gemmreg.timing.shape_documents`)
is input like any other, and its path may name what no run is: a
FIFO (``open`` waits for a writer that never comes), a device (``/dev/zero``
never ends; reading it whole ends in MemoryError), a socket, a symlink loop,
a folder or file the user may not read, or a file far larger than any run
gemmreg writes. :func:`read_saved` refuses each in one line naming the path:
special files and oversized files from ``stat`` alone, before the file is
opened for reading; anything else after at most :data:`MAX_SAVED_BYTES` + 1
bytes, packed or not.

A saved file may be packed (:data:`PACKED_SUFFIXES`): gzip, or xz, which
keeps a run (mostly raw samples) in about 30% fewer bytes than gzip's best
and is what the committed evidence uses for its runs.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib
from collections.abc import Callable
from pathlib import Path

PACKED_SUFFIXES = (".gz", ".xz")
"""The packings a saved file's name may end in: gzip and xz (LZMA), each
unpacked as it is read."""

MAX_SAVED_BYTES = 1 << 30
"""The most a saved file (``run.json``, ``check.json``; a packed one once
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
    one of :data:`PACKED_SUFFIXES`), at most ``limit`` (default :data:`MAX_SAVED_BYTES`).
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
    return _unpacked(path, raw, limit)


def packed_names(name: str) -> tuple[str, ...]:
    """``name`` and its packed forms (:data:`PACKED_SUFFIXES`), in the order
    :func:`read_saved_or_packed` looks for them."""
    return (name, *(name + suffix for suffix in PACKED_SUFFIXES))


def read_saved_or_packed(path: Path, limit: int | None = None) -> tuple[Path, bytes]:
    """The path read and its bytes (:func:`read_saved`): ``path``, or where it
    does not exist the first of its packed forms that does (``run.json.gz``,
    ``run.json.xz``), as committed evidence keeps its runs and checks.
    FileNotFoundError, naming ``path``, when none exists."""
    missing: FileNotFoundError | None = None
    for name in packed_names(path.name):
        candidate = path.with_name(name)
        try:
            return candidate, read_saved(candidate, limit)
        except FileNotFoundError as error:
            missing = missing or error
    assert missing is not None
    raise missing


def _unpacked(path: Path, raw: bytes, limit: int) -> bytes:
    """``raw`` unpacked as its name's suffix says (as it is where none of
    :data:`PACKED_SUFFIXES`), at most ``limit`` bytes of it: a small file
    that unpacks to gigabytes is refused like a large one."""
    if path.suffix not in PACKED_SUFFIXES:
        return raw
    kind, opener, errors = _unpacker(path)
    try:
        with opener(io.BytesIO(raw)) as unpacked:
            data = unpacked.read(limit + 1)
    except errors as error:
        raise UnreadableFile(f"{path} is not a readable {kind} file: {error}") from None
    if len(data) > limit:
        raise UnreadableFile(f"{path} unpacks to more than {limit} bytes: refused")
    return data


def _unpacker(
    path: Path,
) -> tuple[str, Callable[[io.BytesIO], io.BufferedIOBase], tuple[type[BaseException], ...]]:
    """The packing's name, how to open a packed stream, and what a damaged
    one raises. ``lzma`` is imported here: a Python built without it still
    reads everything but ``.xz``, which it refuses in one line."""
    if path.suffix == ".gz":
        return "gzip", lambda raw: gzip.GzipFile(fileobj=raw), (gzip.BadGzipFile, EOFError, zlib.error, OSError)  # fmt: skip
    try:
        import lzma
    except ImportError:
        raise UnreadableFile(
            f"{path} is packed with xz, and this Python was built without the lzma module"
        ) from None
    return "xz", lzma.LZMAFile, (lzma.LZMAError, EOFError, OSError)


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
