"""A saved check: ``check.json``, the correctness results ``check --out`` writes
(:func:`write_check`, each file whole or not at all).

Each case is the :class:`gemmreg.checking.check_runner.CaseResult` as it was recorded.
Older files are read too, upgraded to today's records: the layout before the
value kinds (``problem`` and ``seed`` at the case, the plugin's own inputs),
and schema 1 (no ``schema`` key), whose comparisons carry no tolerance, so
their rows show the error alone. Whatever is wrong with a file is a
:class:`CheckFileError` naming it, never a crash. Each file carries the
checksum of its content (:mod:`gemmreg.reporting.checksums`), verified when read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from gemmreg.checking import check_kinds
from gemmreg.checking.check_runner import CaseResult
from gemmreg.contract import saved_files
from gemmreg.contract.serialization import (
    NON_FINITE_TEXT,
    dumps,
    from_jsonable,
    parse_json,
    schema_of,
    write_atomically,
)
from gemmreg.contract.task_kinds import VALUES
from gemmreg.discovery import interrupts
from gemmreg.reporting import checksums, run_schema
from gemmreg.reporting.not_saved import STORAGE_ERRNOS, RunNotSaved

CHECK_FILE = "check.json"
CHECK_SCHEMA = 2
"""The layout of ``check.json``. 1 (no ``schema`` key): comparisons without
their tolerance; 2: each comparison records the tolerance it was held to."""
NON_FINITE_FIELDS = ("max_error", "max_abs_error", "first_bad")
"""The comparison's figures that may be infinite or NaN (a NaN computed, an
element never written): the writer saves those as text (``"inf"``, ``"nan"``),
and they are numbers again here."""
BEFORE_VALUE_KINDS = "plugin"
"""What drew a case's inputs in files older than the value kinds: the plugin's
own generator, the only one the matrix used then."""


class CheckFileError(ValueError):
    """A ``check.json`` that cannot be read: reported in one line."""


def write_check(directory: Path, manifest: Mapping[str, object], views: Mapping[str, str]) -> None:
    """Write ``manifest.json`` and ``views`` (file name -> rendered text:
    ``check.json`` and the tables, rendered by the caller), each atomically:
    a check saved again as results arrive (``check --ray``) is, at any
    moment, one whole earlier state or the next, never half a file."""
    files = {"manifest.json": dumps(manifest), **views}
    files = {n: checksums.sealed(t) if n == CHECK_FILE else t for n, t in files.items()}
    with interrupts.deferred():  # the files are one unit: see runs.write_run
        for name, text in files.items():
            try:
                write_atomically(directory / name, text + "\n")
            except OSError as error:
                if error.errno not in STORAGE_ERRNOS:
                    raise
                raise RunNotSaved(directory / name, error.strerror or str(error)) from None


def load_check(
    path: Path, verify: bool = True, on_note: Callable[[str], None] | None = None
) -> tuple[list[CaseResult], bool]:
    """(results, partial) of a saved check: ``path`` is the file or its directory
    (whose ``check.json``, or a packed ``check.json.gz`` or ``.xz``).
    A check whose content does not match its checksum is refused, as
    :func:`gemmreg.reporting.runs.load_run` refuses a run; with ``verify=False``
    it is read, and ``on_note`` told so. One saved before checksums reads as before."""
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            path = path / CHECK_FILE  # named by any error below
            path, raw = saved_files.read_saved_or_packed(path)
        else:
            raw = saved_files.read_saved(path)
        data: object = parse_json(raw.decode("utf-8"))
    except saved_files.UnreadableFile as error:
        raise CheckFileError(str(error)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise CheckFileError(f"cannot read {path}: {saved_files.why(error)}") from None
    except (ValueError, RecursionError) as error:
        raise CheckFileError(f"{path} is not a readable gemmreg check: not JSON: {error}") from None
    if isinstance(data, dict):
        if checksums.check(data) is checksums.Seal.MISMATCH:
            if verify:
                raise CheckFileError(
                    f"{path}: its content does not match its checksum (changed since gemmreg "
                    "saved it); refused (report --accept-edited reads it anyway, with a warning)"
                )
            if on_note is not None:
                on_note(f"warning: {path}: content does not match its checksum; read anyway")
        data = checksums.unsealed(data)
    try:
        results = results_from_dict(data)
    except (run_schema.SchemaError, ValueError, TypeError, KeyError) as error:
        raise CheckFileError(f"{path} is not a readable gemmreg check: {error}") from None
    assert isinstance(data, dict)  # results_from_dict refused anything else
    return results, bool(data.get("partial"))


def results_from_dict(data: object) -> list[CaseResult]:
    """Rebuild the results of a parsed ``check.json``, any schema up to today's."""
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise run_schema.SchemaError("expected an object with a list of 'cases'")
    schema_of(data, CHECK_SCHEMA)  # from a newer gemmreg: refused in one line
    results = []
    for index, case in enumerate(data["cases"]):
        checked = run_schema.check_record(CaseResult, upgrade_case(case), f"cases[{index}]")
        _known_kind(checked.get("kind", VALUES), f"cases[{index}].kind")
        result = case_result(checked)
        _ = result.tolerance  # a saved tolerance must build, here and not in a renderer
        results.append(result)
    return results


def _known_kind(kind: object, where: str) -> None:
    """A case's kind must be a registered check kind: the one that reads it."""
    if kind not in check_kinds.names():
        choices = ", ".join(repr(name) for name in check_kinds.names())
        shown = repr(kind) if len(repr(kind)) <= 40 else repr(kind)[:37] + "..."
        raise run_schema.SchemaError(f"{where}: expected one of {choices}, got {shown}")


def upgrade_case(data: object) -> object:
    """A case in today's layout: one from before the value kinds is moved into
    its ``case``; anything else is kept, for the schema check to name."""
    if isinstance(data, dict) and "case" not in data and "problem" in data:
        rest = {k: v for k, v in data.items() if k not in ("problem", "seed")}
        case = {"problem": data["problem"], "seed": data.get("seed"), "values": BEFORE_VALUE_KINDS}
        return {**rest, "case": case}
    return data


def case_result(data: Mapping[str, object]) -> CaseResult:
    """The record of one saved case (already checked against its fields)."""
    comparison = data.get("comparison")
    if isinstance(comparison, dict):  # or None: the schema check allows no other
        comparison = {k: _number(v) if k in NON_FINITE_FIELDS else v for k, v in comparison.items()}
    return from_jsonable(CaseResult, {**data, "comparison": comparison})


def _number(value: object) -> object:
    if isinstance(value, list):
        return [_number(item) for item in value]
    if isinstance(value, str) and value.strip().lower() in NON_FINITE_TEXT:
        return float(value)
    return value
