"""``gemmreg report DIR`` where DIR is a saved check (``check --out DIR``):
its cases again, as ``check`` printed them, in any of report's formats.

Why report reads checks too: a check saved on a GPU machine is read back on
a laptop, and ``report`` is the command that renders what was saved; before,
it answered that the folder was "not a gemmreg run" and left the user to
open ``check.json`` by hand. A saved check holds no timings, so the options
that read a timing run's (its verdicts, regimes, kernels, plots, margins,
parts and regressions) are refused in one line rather than ignored."""

from __future__ import annotations

import argparse
from pathlib import Path

from gemmreg.commands import document_output
from gemmreg.commands.cli_common import EXIT_OK, _progress
from gemmreg.contract import saved_files
from gemmreg.contract.options import UsageError

TIMING_ONLY = (
    ("verdicts", "--verdicts"),
    ("regimes", "--regimes"),
    ("kernels", "--kernels"),
    ("parts", "--parts"),
    ("plot", "--plot"),
    ("margin", "--margin"),
    ("threshold", "--threshold"),
    ("baseline", "--baseline"),
    ("peaks", "--peaks"),
    ("sweep_wide", "--sweep-wide"),
    ("fail_on", "--fail-on"),
)
"""report's options that read a timing run (``run.json``), by argparse name."""


def _given(value: object) -> bool:
    """An option given: not its default (None, False, or ``--fail-on``'s no
    conditions); ``--threshold 0`` is given."""
    return value is not None and value is not False and value != ()


def is_saved_check(path: Path) -> bool:
    """Whether ``path`` is a folder that ``check --out`` wrote (``check.json``,
    or a packed ``check.json.gz`` or ``.xz``) and holds no timing run."""
    from gemmreg.reporting import check_files, runs

    def holds(name: str) -> bool:
        return any((path / packed).is_file() for packed in saved_files.packed_names(name))

    try:
        return path.is_dir() and holds(check_files.CHECK_FILE) and not holds(runs.RUN_FILE)
    except OSError:  # unreadable: report's own reading says why
        return False


def report_check(args: argparse.Namespace, path: Path) -> int:
    """Render the saved check ``path`` (one of ``args.runs``, which must be
    it alone) as ``check`` printed it."""
    from gemmreg.reporting import check_files, formats, render

    if len(args.runs) > 1:
        raise UsageError(
            f"{path} is a saved check: report shows one check at a time; give it alone"
        )
    given = [option for name, option in TIMING_ONLY if _given(getattr(args, name, None))]
    if given:
        raise UsageError(
            f"{path} is a saved check, not a timing run: report shows its cases; "
            f"{' and '.join(given)} {'reads' if len(given) == 1 else 'read'} a run's timings"
        )
    notes: list[str] = []  # said once the check reads: a refusal stays one line
    try:
        results, partial = check_files.load_check(path, not args.accept_edited, notes.append)
    except check_files.CheckFileError as error:
        raise UsageError(str(error)) from None
    for note in notes:
        _progress(note)
    if partial and formats.get(args.format).document_only:  # a table carries its banner
        _progress("gemmreg: PARTIAL check: interrupted before its last case")
    document_output.emit(render.check_output(results, args.format, partial, every_case=False))
    return EXIT_OK
