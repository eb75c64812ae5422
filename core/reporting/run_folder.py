"""One writer per run folder: a run claims its folder before any work starts,
and holds it until the process ends.

Two runs given the same ``--out`` (``check``, ``compare`` or ``bench``, or
default names made in the same second) used to write into one folder, each
saying its run was saved, and the last to finish silently replaced the
other. Now the claim is a lock on the folder
itself (``flock`` on the directory, released by the system when the process
ends however it ends, so a killed run never leaves a stale lock), and a folder
that is held, or already holds a run, is refused in one line (exit 2) unless
``--force`` says to replace a run no live process holds. Default folders get a
name no other run can take: the time and a random suffix, made with an
exclusive ``mkdir``.

Before the run, a small real file is written, flushed to the disk and removed:
an empty probe passed on a full disk, and the run then lost its figures at
the first save.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import attrs
from gemmreg.contract import saved_files
from gemmreg.contract.options import UsageError

OLD_RUN_FILES = (
    *saved_files.packed_names("run.json"),
    "manifest.json",
    "summary.csv",
    "report.txt",
    "report.md",
    "profiler",
    *saved_files.packed_names("check.json"),
    "check.txt",
    "check.md",
    "sanitize-summary.txt",
    "sanitizer",
)
"""What a saved run consists of (a timing run's record, its views and
``--ncu``'s profiles; a check's record, its tables and sanitizer logs): the
names ``--force`` removes before the new run writes, so that no file of the
old run is ever read as the new one's. Anything else in the folder (a user's
own notes) is left as it is."""
RUN_MARKERS = (*saved_files.packed_names("run.json"), *saved_files.packed_names("check.json"))
"""A folder holding any of these already holds a run: a timing run or a
check, either of which another run's ``manifest.json`` would overwrite."""
PROBE_BYTES = 64 * 1024
"""The probe written before the run: about the size of a small run's
``run.json``, so a disk too full to hold one is refused before the timing,
not after it; small enough to cost nothing on a disk that has room."""
NAME_TRIES = 100
"""Random suffixes tried for a default folder before giving up (each a
1-in-16-million collision with another run started in the same second)."""


@attrs.define
class Claim:
    """A run folder held by this process until :meth:`release` (or its end)."""

    directory: Path
    fd: int | None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the folder drops the lock
            self.fd = None


_HELD: list[Claim] = []
"""The folders this process holds: released when its command ends
(:func:`release_all`), or by the system when the process does."""


def release_all() -> None:
    """Let go of every folder this process claimed (a command has ended)."""
    while _HELD:
        _HELD.pop().release()


@contextlib.contextmanager
def released() -> Iterator[None]:
    """The folders claimed inside are let go of when it ends: a call of the
    Python API, in a process that goes on (a notebook) and may save into
    them again (``force``)."""
    before = len(_HELD)
    try:
        yield
    finally:
        while len(_HELD) > before:
            _HELD.pop().release()


def default_folder(parent: Path, stem: str) -> Path:
    """A new folder ``parent/stem-YYYYmmdd-HHMMSS-xxxxxx``, made here (an
    exclusive ``mkdir``: two runs in one second never share one)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for _ in range(NAME_TRIES):
            folder = parent / f"{stem}-{stamp}-{secrets.token_hex(3)}"
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            return folder
    except OSError as error:
        raise UsageError(f"cannot make a run folder in {str(parent)!r}: {_why(error)}") from None
    raise UsageError(f"cannot make a run folder in {str(parent)!r}: every name tried was taken")


def claim(
    directory: Path, option: str = "--out", force: bool = False, force_option: str = "--force"
) -> Claim:
    """Hold ``directory`` for this run, or refuse it in one line: another
    live run holds it, it already holds a run (without ``force``), or it
    cannot be written (the probe). With ``force``, the old run's files
    (:data:`OLD_RUN_FILES`) are removed once the folder is held. ``option``
    and ``force_option`` name the two as the user gave them (``--out`` on
    the command line, ``out`` in a call of the Python API)."""
    shown = f"{option} {str(directory)!r}"
    try:
        if directory.exists() and not directory.is_dir():
            raise UsageError(f"{shown} exists and is not a directory")
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise UsageError(f"{shown}: cannot write there: {_why(error)}") from None
    held = Claim(directory, fd)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"{shown} is being written by another gemmreg run; choose another folder"
            ) from None
        marker = next((m for m in RUN_MARKERS if (directory / m).exists()), None)
        if marker is not None and not force:
            raise UsageError(
                f"{shown} already holds a run ({marker}); choose another folder, "
                f"or {force_option} to replace it"
            )
        if force:
            _remove_old_run(directory, shown)
        probe(directory, shown)
    except BaseException:
        held.release()
        raise
    _HELD.append(held)
    return held


def probe(directory: Path, shown: str) -> None:
    """Write :data:`PROBE_BYTES` into ``directory``, flush them to the disk
    and remove them: a folder that cannot hold a small run is refused now."""
    path = directory / f".gemmreg-probe-{os.getpid()}"
    try:
        with open(path, "wb") as handle:
            handle.write(b"\0" * PROBE_BYTES)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as error:
        raise UsageError(f"{shown}: cannot write there: {_why(error)}") from None
    finally:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _remove_old_run(directory: Path, shown: str) -> None:
    """The old run's files, and the temporary files a save killed midway
    left (``.run.json.XXXXXXXX``: :func:`gemmreg.contract.serialization.write_atomically`)."""
    leftovers = [p for name in OLD_RUN_FILES for p in directory.glob(f".{name}.*")]
    for path in [*(directory / name for name in OLD_RUN_FILES), *leftovers]:
        name = path.name
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError as error:
            raise UsageError(
                f"{shown}: cannot remove the old run's {name}: {_why(error)}"
            ) from None


def _why(error: BaseException) -> str:
    return getattr(error, "strerror", None) or str(error)
