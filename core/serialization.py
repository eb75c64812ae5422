"""Records to JSON text, and files written whole or not at all.

Storage (saved runs and checks) and presentation (the tables) both write
through these, so neither needs the other for it.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import attrs


def to_jsonable(value: Any) -> Any:
    if attrs.has(type(value)):
        return to_jsonable(attrs.asdict(value, recurse=False))
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def dumps(value: Any) -> str:
    return json.dumps(to_jsonable(value), indent=2, sort_keys=False)


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file and a rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes 0600; evidence is for sharing
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
