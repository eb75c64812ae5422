"""Saved runs: the evidence directory ``compare --out`` and ``bench --out``
write, and ``gemmreg report`` reads back.

A run directory holds:

- ``run.json``: the manifest and every report, with every sample, and the
  checksum of all of it (:mod:`gemmreg.reporting.checksums`), which reading verifies;
- ``manifest.json``: the environment record alone;
- the views the caller renders (``summary.csv``, ``report.txt``, ``report.md``:
  :func:`gemmreg.reporting.render_compare.run_views`). Storage never imports a renderer:
  the tables are presentation's, handed in as text.

Each file is rewritten atomically after every finished point, so an
interrupted sweep keeps what it finished, marked partial; ``run.json`` first,
and the views rendered from it after (:func:`write_run`). One run writes a
folder at a time (:mod:`gemmreg.reporting.run_folder`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gemmreg.contract import saved_files
from gemmreg.contract.serialization import (
    JSON,
    document,
    dumps,
    parse_json,
    refuse_newer,
    schema_of,
    write_atomically,
)
from gemmreg.discovery import interrupts
from gemmreg.reporting import checksums, run_consistency, run_plan, run_schema
from gemmreg.reporting.not_saved import STORAGE_ERRNOS, RunNotSaved
from gemmreg.reporting.schema_2 import upgrade
from gemmreg.timing.timing_records import SCHEMA, CompareReport

RUN_FILE = "run.json"
RUN_SCHEMA = SCHEMA
"""The layout of ``run.json``: its reports' (:data:`gemmreg.timing.timing_records.SCHEMA`).
Runs saved before the file said so carry it in each report alone."""


class RunError(ValueError):
    """A run directory that cannot be read: reported in one line."""


Views = Mapping[str, str] | Callable[[Sequence[CompareReport], bool], Mapping[str, str]]
"""A run's views (file name -> text), or how to render them from its reports."""


def write_run_json(
    directory: Path, manifest: Mapping[str, object], reports: Sequence[CompareReport], partial: bool
) -> str:
    """Write ``run.json`` (atomically: the old file or the new, never half
    of one), and return its text: the one writer of a run's record."""
    text = checksums.sealed(
        document(RUN_SCHEMA, {"manifest": manifest, "partial": partial, "reports": list(reports)})
    )
    write_atomically(directory / RUN_FILE, text + "\n")
    return text


def write_run(
    directory: Path,
    manifest: Mapping[str, object],
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
                views = views(_reports(parse_json(text)), partial)
            for name, view in (views or {}).items():
                path = directory / name
                write_atomically(path, view + "\n")
        except OSError as error:
            if error.errno not in STORAGE_ERRNOS:
                raise
            raise RunNotSaved(path, _why(error)) from None


def report_from_dict(data: Mapping[str, object]) -> CompareReport:
    """One report of a run (checked, or today's), as its record."""
    return CompareReport.from_dict(data)


def _reports(data: object) -> list[CompareReport]:
    """The reports of a run's document: one just written, or one that
    :func:`gemmreg.reporting.run_schema.check_run` has passed (an object with a
    list of reports, each an object)."""
    assert isinstance(data, dict) and isinstance(data["reports"], list)
    return [report_from_dict(r) for r in data["reports"]]


def load_run(
    directory: Path, verify: bool = True, on_note: Callable[[str], None] | None = None
) -> tuple[dict[str, Any], list[CompareReport], bool]:
    """(manifest, reports, partial) of a saved run. Whatever is wrong with the
    directory or its ``run.json`` is a :class:`RunError` naming it, never a crash.

    A run whose content does not match its checksum (:mod:`gemmreg.reporting.checksums`)
    is refused; with ``verify=False`` it is read, and ``on_note`` told so, as
    it is told of a run saved before checksums."""
    data: object
    path, data = _read_json(directory, directory / RUN_FILE)
    notes: list[str] = []  # said once the run reads: a refusal stays one line
    try:
        _check_versions(data)
        data = _checked_seal(path, data, verify, notes.append)
        if isinstance(data, dict) and isinstance(data.get("reports"), list):
            data["reports"] = [upgrade(report) for report in data["reports"]]
        run_schema.check_run(data, CompareReport)
        assert isinstance(data, dict)  # check_run refused anything else
        plan = run_plan.plan_of(data.get("manifest", {}))
    except RunError:
        raise
    except ValueError as error:  # SchemaError, NewerSchemaError, or no version number
        raise RunError(f"{path} is not a readable gemmreg run: {error}") from None
    except RecursionError:
        raise RunError(f"{path} is not a readable gemmreg run: nested too deeply") from None
    try:
        reports = _reports(data)
    except Exception as error:  # the records' own validators have the last word
        raise RunError(
            f"{path} is not a readable gemmreg run: {type(error).__name__}: {error}"
        ) from None
    wrong = run_consistency.refusal(reports) or run_plan.refusal(plan, reports)
    if wrong:
        raise RunError(f"{path} is not a readable gemmreg run: {wrong}")
    for note in notes:
        if on_note is not None:
            on_note(note)
    return data.get("manifest", {}), reports, bool(data.get("partial"))


def _check_versions(data: object) -> None:
    """A run (or a report in it) from a newer gemmreg is refused, in one line,
    before its layout is judged against today's records."""
    if not isinstance(data, dict):
        return
    schema_of(data, RUN_SCHEMA)
    reports = data.get("reports")
    for report in reports if isinstance(reports, list) else ():
        if isinstance(report, dict):
            refuse_newer(report.get("schema"), SCHEMA)


def _checked_seal(path: Path, data: object, verify: bool, note: Callable[[str], None]) -> object:
    """``data`` without its checksum, once the checksum is judged."""
    if not isinstance(data, dict):
        return data  # not a run at all: the schema check names it
    seal = checksums.check(data)
    if seal is checksums.Seal.MISMATCH and verify:
        raise RunError(
            f"{path}: its content does not match its checksum (changed since gemmreg "
            "saved it); refused (report --accept-edited reads it anyway, with a warning)"
        )
    if seal is checksums.Seal.MISMATCH:
        note(f"warning: {path}: content does not match its checksum; read anyway (--accept-edited)")
    elif seal is checksums.Seal.ABSENT:
        note(
            f"note: {path} carries no checksum (saved before checksums, or written by "
            "--format json): its content is not verified"
        )
    return checksums.unsealed(data)


def _read_json(directory: Path, path: Path) -> tuple[Path, JSON]:
    """The path read and the parsed ``run.json`` (or ``run.json.gz`` or
    ``run.json.xz``, packed as committed evidence keeps it), or a RunError
    saying why there is none. No special file (a FIFO, a device) is opened
    for reading, and no more is read than a saved file may hold
    (:func:`gemmreg.contract.saved_files.read_saved`)."""
    try:
        mode = os.stat(directory).st_mode
    except FileNotFoundError:
        raise RunError(f"{directory}: no such run directory") from None
    except (OSError, ValueError) as error:
        raise RunError(f"cannot read {directory}: {_why(error)}") from None
    if not stat.S_ISDIR(mode):
        raise RunError(f"{directory} is a file: name the run's directory, which holds {RUN_FILE}")
    try:
        path, raw = saved_files.read_saved_or_packed(path)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise RunError(f"{directory} is not a gemmreg run (no {RUN_FILE})") from None
    except saved_files.UnreadableFile as error:
        raise RunError(str(error)) from None
    except UnicodeDecodeError as error:
        raise RunError(f"{path} is not UTF-8 text (bad byte at offset {error.start})") from None
    try:
        return path, parse_json(text)
    except RecursionError:
        raise RunError(f"{path} is not a readable gemmreg run: nested too deeply") from None
    except ValueError as error:  # JSONDecodeError, or an integer too long to convert
        raise RunError(f"{path} is not a readable gemmreg run: not JSON: {error}") from None


def _why(error: Exception) -> str:
    return saved_files.why(error)
