"""gemmreg's temporary folders (the workers' compile caches), named for the
process that owns them, so that those a killed run left behind are removed by
the next run.

A folder is removed by its owner on every exit the process can see (a
``with`` block, or the exit handlers :mod:`gemmreg.workers.quick_exit` runs).
SIGKILL allows none of that: each killed run left an empty (or a full)
``gemmreg-caches-*`` folder in the temporary directory. The owner's pid is in
the name, and :func:`sweep_orphans` removes the folders whose owner is no
longer alive, never one of a live process (a pid taken again by another
process keeps its folder until that one ends: the safe side).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

OWNED = re.compile(r"^gemmreg-[a-z]+(?:-[a-z]+)*-pid(?P<pid>[0-9]+)-")
"""The name of a folder :func:`temporary_folder` made: kind, then the owner's pid."""


def owned_prefix(kind: str) -> str:
    """``gemmreg-<kind>-pid<this process>-``: the start of this process's folder names."""
    return f"gemmreg-{kind}-pid{os.getpid()}-"


def temporary_folder(kind: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary folder owned by this process (removed when it is closed,
    or at exit; by a later run's :func:`sweep_orphans` if this one is killed)."""
    return tempfile.TemporaryDirectory(prefix=owned_prefix(kind))


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists here (one of another user counts)."""
    if pid <= 0:
        return True  # never a folder's owner: leave it alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, someone else's
    return True


def sweep_orphans(root: Path | None = None) -> list[Path]:
    """Remove the folders :func:`temporary_folder` made in ``root`` (the
    temporary directory) whose owner is dead and that belong to this user;
    return them. Anything that cannot be read or removed is left alone."""
    root = Path(tempfile.gettempdir()) if root is None else root
    removed = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    for entry in entries:
        match = OWNED.match(entry.name)
        if match is None or alive(int(match["pid"])):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed
