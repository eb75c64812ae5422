"""A save the storage refused: what ends a run in one line (exit 4) instead of
an internal error. Kept apart from :mod:`gemmreg.reporting.runs` so that the
command line can name it without importing the records."""

from __future__ import annotations

import errno
from pathlib import Path

STORAGE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EIO, errno.EFBIG}
)
"""Why a save fails that is the storage's doing, not gemmreg's: a full disk
or quota, a folder made unwritable or read-only under the run, a failing
disk. Each ends the run in one line (:class:`RunNotSaved`), never as an
internal error."""


class RunNotSaved(Exception):
    """A save the storage refused (:data:`STORAGE_ERRNOS`): ``path`` and why."""

    def __init__(self, path: Path, why: str):
        self.path, self.why = path, why
        super().__init__(f"cannot write {path}: {why}")
