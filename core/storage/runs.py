"""Saved runs: the evidence directory ``compare --out`` and ``bench --out``
write, and ``gemmreg report`` reads back.

A run directory holds:

- ``run.json``: the manifest and every report, with every sample;
- ``manifest.json``: the environment record alone;
- the views the caller renders (``summary.csv``, ``report.txt``, ``report.md``:
  :func:`gemmreg.rendering.render_compare.run_views`). Storage never imports a renderer:
  the tables are presentation's, handed in as text.

Each file is rewritten atomically after every finished point, so an
interrupted sweep keeps what it finished, marked partial; ``run.json`` first,
and the views rendered from it after (:func:`write_run`). One run writes a
folder at a time (:mod:`gemmreg.storage.run_folder`).
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gemmreg.contract.serialization import (
    document,
    dumps,
    parse_json,
    refuse_newer,
    schema_of,
    write_atomically,
)
from gemmreg.discovery import interrupts
from gemmreg.judging.schema_1 import upgrade
from gemmreg.judging.timing_records import SCHEMA, CompareReport
from gemmreg.storage import run_schema
from gemmreg.storage.not_saved import STORAGE_ERRNOS, RunNotSaved

RUN_FILE = "run.json"
RUN_SCHEMA = SCHEMA
"""The layout of ``run.json``: its reports' (:data:`gemmreg.judging.timing_records.SCHEMA`).
Runs saved before the file said so carry it in each report alone."""


class RunError(ValueError):
    """A run directory that cannot be read: reported in one line."""


Views = Mapping[str, str] | Callable[[Sequence[CompareReport], bool], Mapping[str, str]]
"""A run's views (file name -> text), or how to render them from its reports."""


def write_run_json(
    directory: Path, manifest: dict[str, Any], reports: Sequence[CompareReport], partial: bool
) -> str:
    """Write ``run.json`` (atomically: the old file or the new, never half
    of one), and return its text: the one writer of a run's record."""
    text = document(
        RUN_SCHEMA, {"manifest": manifest, "partial": partial, "reports": list(reports)}
    )
    write_atomically(directory / RUN_FILE, text + "\n")
    return text


def write_run(
    directory: Path,
    manifest: dict[str, Any],
    reports: Sequence[CompareReport],
    partial: bool,
    views: Views | None = None,
) -> None:
    """Write the run, then ``views`` beside it: a callable is handed the
    reports as ``run.json`` holds them, read back from its text, so the
    tables never say what the record does not.

    The files are one unit: Ctrl-C, SIGTERM and SIGHUP wait until every one
    is written (a second Ctrl-C used to leave ``run.json`` one point ahead
    of the tables). A storage failure is a :class:`RunNotSaved`."""
    path = directory / RUN_FILE
    with interrupts.deferred():
        try:
            text = write_run_json(directory, manifest, reports, partial)
            path = directory / "manifest.json"
            write_atomically(path, dumps(manifest) + "\n")
            if callable(views):
                views = views([report_from_dict(r) for r in parse_json(text)["reports"]], partial)
            for name, view in (views or {}).items():
                path = directory / name
                write_atomically(path, view + "\n")
        except OSError as error:
            if error.errno not in STORAGE_ERRNOS:
                raise
            raise RunNotSaved(path, _why(error)) from None


def report_from_dict(data: dict[str, Any]) -> CompareReport:
    """One report of a run (checked, or today's), as its record."""
    return CompareReport.from_dict(data)


def load_run(directory: Path) -> tuple[dict[str, Any], list[CompareReport], bool]:
    """(manifest, reports, partial) of a saved run. Whatever is wrong with the
    directory or its ``run.json`` is a :class:`RunError` naming it, never a crash."""
    path = directory / RUN_FILE
    data = _read_json(directory, path)
    try:
        _check_versions(data)
        if isinstance(data, dict) and isinstance(data.get("reports"), list):
            data["reports"] = [upgrade(report) for report in data["reports"]]
        run_schema.check_run(data, CompareReport)
    except ValueError as error:  # SchemaError, NewerSchemaError, or no version number
        raise RunError(f"{path} is not a readable gemmreg run: {error}") from None
    except RecursionError:
        raise RunError(f"{path} is not a readable gemmreg run: nested too deeply") from None
    try:
        reports = [report_from_dict(r) for r in data["reports"]]
    except Exception as error:  # the records' own validators have the last word
        raise RunError(
            f"{path} is not a readable gemmreg run: {type(error).__name__}: {error}"
        ) from None
    return data.get("manifest", {}), reports, bool(data.get("partial"))


def _check_versions(data: Any) -> None:
    """A run (or a report in it) from a newer gemmreg is refused, in one line,
    before its layout is judged against today's records."""
    if not isinstance(data, dict):
        return
    schema_of(data, RUN_SCHEMA)
    reports = data.get("reports")
    for report in reports if isinstance(reports, list) else ():
        if isinstance(report, dict):
            refuse_newer(report.get("schema"), SCHEMA)


def _read_json(directory: Path, path: Path) -> Any:
    """The parsed ``run.json`` (or ``run.json.gz``, as committed evidence keeps
    it), or a RunError saying why there is none."""
    try:
        present, folder = directory.exists(), directory.is_dir()
    except (OSError, ValueError) as error:
        raise RunError(f"cannot read {directory}: {_why(error)}") from None
    if not present:
        raise RunError(f"{directory}: no such run directory")
    if not folder:
        raise RunError(f"{directory} is a file: name the run's directory, which holds {RUN_FILE}")
    packed = path.with_name(path.name + ".gz")
    if not path.exists() and packed.is_file():
        path = packed  # evidence keeps its raw samples compressed
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise RunError(f"{directory} is not a gemmreg run (no {RUN_FILE})") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise RunError(f"{path} is not a readable gzip file: {error}") from None
    except IsADirectoryError:
        raise RunError(f"{path} is a directory, not a file") from None
    except UnicodeDecodeError as error:
        raise RunError(f"{path} is not UTF-8 text (bad byte at offset {error.start})") from None
    except (OSError, ValueError) as error:
        raise RunError(f"cannot read {path}: {_why(error)}") from None
    try:
        return parse_json(text)
    except RecursionError:
        raise RunError(f"{path} is not a readable gemmreg run: nested too deeply") from None
    except ValueError as error:  # JSONDecodeError, or an integer too long to convert
        raise RunError(f"{path} is not a readable gemmreg run: not JSON: {error}") from None


def _why(error: Exception) -> str:
    return getattr(error, "strerror", None) or str(error)
