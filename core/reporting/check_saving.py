"""``check --out``: the evidence of a check, rendered and saved whole.

The same files at the end of every check, and, under ``check --ray``, after
every batch that comes back (marked partial until the end), so a driver that
dies mid-run keeps every batch that finished: each file is written
atomically (:func:`gemmreg.reporting.check_files.write_check`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gemmreg.checking.check_runner import CaseResult
from gemmreg.reporting import check_files, render

CHECK_FILES = {"check.txt": "table", "check.md": "markdown", "check.json": "json"}
"""The saved views of a check, and their formats."""


def check_views(results: Sequence[CaseResult], partial: bool, sanitized: bool) -> dict[str, str]:
    """The check's files, by name: its table, markdown and JSON (and the
    sanitizer summary after a sanitizer pass), marked partial when ``partial``."""
    summary = {"sanitize-summary.txt": render.sanitize_summary(results, "table")}
    return {
        **(summary if sanitized else {}),
        **{name: render.check_output(results, fmt, partial) for name, fmt in CHECK_FILES.items()},
    }


def save_check(
    out: Path,
    manifest: dict[str, Any],
    results: Sequence[CaseResult],
    partial: bool,
    sanitized: bool = False,
) -> None:
    """The check as it stands, saved under ``out``, every file whole."""
    check_files.write_check(out, manifest, check_views(results, partial, sanitized))
