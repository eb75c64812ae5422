"""The on-disk record of tuning choices, so a shape is benchmarked once.

One JSON file, ``triton_tuned.json``, in the plugin cache directory the core
names (``gemmreg.where().cache_dir``: ``$GEMMREG_CACHE_DIR``, else
``~/.cache/gemmreg/``). An entry is keyed by everything that can change the
winner: the shape, dtype and layout; the device name and compute capability;
Triton's version; and a hash of the kernel source and the candidate lists (so
editing either retunes). ``GEMMREG_TRITON_TUNED_RETUNE=1`` ignores what is
stored (and overwrites it).

Writes are atomic (a temporary file in the same directory, then
``os.replace``): a reader never sees half a file. Two processes tuning at once
may each write; the later file wins and the earlier entry is tuned again
later, never corrupted. A corrupt, foreign or unreadable file counts as empty,
and a cache that cannot be written is skipped: the cache only saves time, it
never decides correctness.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import gemmreg
from gemmreg_plugins.triton_tuned.launch_config import PATHS, Config

RETUNE_ENV = "GEMMREG_TRITON_TUNED_RETUNE"
PATH_ENV = "GEMMREG_TRITON_TUNED_PATH"
"""A kernel path of ``launch_config.PATHS`` (``tiled``, ``persistent_tma``,
``gluon_ws`` ...): tune over that path's candidates only (where it has any for
the problem), so the correctness matrix can be run on each path."""
TUNE_ENV = "GEMMREG_TRITON_TUNED_TUNE"
"""``0``: benchmark nothing; use a stored choice, else the first candidate (of
the forced path, if one is forced). For correctness runs that should not pay
for tuning every shape (``gemmreg check --full`` on each path)."""
CONFIG_ENV = "GEMMREG_TRITON_TUNED_CONFIG"
"""A config's name (``gluon_ws:128x128x64-s5-w4``, as the tuning cache names
it): launch that config, untuned, at every problem where its path is offered
(:func:`.paths_here.candidates_for`; elsewhere the usual choice), so that
``gemmreg check`` can run one form the tuner would pick only at a few shapes
over the whole matrix. Outranks ``PATH_ENV``; the fp8 and grouped paths keep
their own rules."""
UNMEASURED_ENV = "GEMMREG_TRITON_TUNED_UNMEASURED"
"""``1``: offer the forms no GPU has ranked yet (the Gluon kernel on a
transposed-view B where its tiles leave SMs idle, and its 128x128 tiles; the
TMA tiles in pieces: :func:`.configs.unmeasured`,
:func:`.paths_here.transposed_view_offered`), so that a GPU machine can check
and probe them before they reach users."""
RECORD_ENV = "GEMMREG_TRITON_TUNED_RECORD"
"""A file path: every tuning also stores its entry there (the choice, each
candidate's screening and ranked times, why any was skipped), as in the
cache. A timing command gives its processes caches of their own that go
when it ends (``gemmreg compare``'s cold start), so this is how a run keeps
why the tuner chose what ``report --kernels`` shows it ran. Processes
tuning at once may lose one another's entries (the last write wins)."""
FILE_NAME = "triton_tuned.json"
FORMAT = "gemmreg-triton-tuned/1"
"""Written into the file; a file with any other format is ignored (and replaced)."""


def cache_dir() -> Path:
    return gemmreg.where().cache_dir


def cache_path() -> Path:
    return cache_dir() / FILE_NAME


def record_path() -> Path | None:
    """Where :data:`RECORD_ENV` asks tunings to be recorded, or None."""
    value = os.environ.get(RECORD_ENV, "").strip()
    return Path(value) if value else None


def retune_forced() -> bool:
    return os.environ.get(RETUNE_ENV, "").strip() not in ("", "0")


def benchmarking_allowed() -> bool:
    """False under a sanitizer (kernels run 10-100x slower there and timings
    mean nothing), or where ``GEMMREG_TRITON_TUNED_TUNE=0``."""
    if gemmreg.where().sanitizer:
        return False
    return os.environ.get(TUNE_ENV, "").strip() != "0"


def unmeasured_offered() -> bool:
    """Whether :data:`UNMEASURED_ENV` asks for the forms no GPU has run yet."""
    return os.environ.get(UNMEASURED_ENV, "").strip() not in ("", "0")


def forced_path() -> str | None:
    """The path ``PATH_ENV`` forces, or None; anything else is an error."""
    value = os.environ.get(PATH_ENV, "").strip()
    if not value:
        return None
    if value not in PATHS:
        raise ValueError(f"{PATH_ENV} must be one of {', '.join(PATHS)}, got {value!r}")
    return value


def forced_config() -> Config | None:
    """The config ``CONFIG_ENV`` names, or None; a name that is no config is an error."""
    value = os.environ.get(CONFIG_ENV, "").strip()
    if not value:
        return None
    try:
        return Config.from_name(value)
    except ValueError as error:
        raise ValueError(f"{CONFIG_ENV}: {error}") from None


def source_hash(paths: Iterable[str | Path], extra: str = "") -> str:
    """sha256 (first 16 hex digits) of the files' bytes and ``extra`` (the
    candidate lists as text), in order."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
        digest.update(b"\0")
    digest.update(extra.encode())
    return digest.hexdigest()[:16]


@attrs.frozen(kw_only=True)
class CacheKey:
    """Everything a tuned choice depends on."""

    m: int
    n: int
    k: int
    dtype: str
    layout: str
    device: str
    """The device's name, as torch reports it."""
    capability: str
    """``sm90`` on CUDA, the architecture name on ROCm."""
    triton: str
    source: str
    """``source_hash`` of the kernel source and candidate lists."""
    paths: str = "all"
    """The kernel paths tuned over: ``all``, or the one ``PATH_ENV`` forces."""

    def text(self) -> str:
        """The JSON object key: readable, and different whenever any field differs."""
        return "|".join(
            [
                f"{self.m}x{self.n}x{self.k}",
                self.dtype,
                self.layout,
                self.device,
                self.capability,
                f"triton-{self.triton}",
                f"src-{self.source}",
                f"paths-{self.paths}",
            ]
        )


def _read(path: Path) -> dict[str, Any]:
    """The entries in ``path``; empty when it is missing, corrupt or foreign."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return {}
    return {key: value for key, value in entries.items() if isinstance(value, dict)}


def lookup(key: CacheKey, path: Path | None = None) -> dict[str, Any] | None:
    """The stored entry for ``key``, or None (also when a retune is forced)."""
    if retune_forced():
        return None
    return _read(path or cache_path()).get(key.text())


def store(key: CacheKey, entry: Mapping[str, Any], path: Path | None = None) -> str | None:
    """Add or replace ``key``'s entry, atomically. Returns why it could not be
    written, or None."""
    path = path or cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        entries = _read(path)
        entries[key.text()] = dict(entry)
        text = json.dumps({"format": FORMAT, "entries": entries}, indent=1, sort_keys=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{FILE_NAME}.", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text + "\n")
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as error:
        return f"{type(error).__name__}: {error}"
    return None
