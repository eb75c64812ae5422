"""Saved runs: the evidence directory ``compare --out`` and ``bench --out``
write, and ``gemmreg report`` reads back.

A run directory holds:

- ``run.json``: the manifest and every report, with every sample;
- ``summary.csv``: one row per kernel and problem;
- ``report.txt`` and ``report.md``: the tables as printed;
- ``manifest.json``: the environment record alone.

Each file is rewritten atomically after every finished point, so an
interrupted sweep keeps what it finished, marked partial.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gemmreg import render, render_compare
from gemmreg.timing_records import CompareReport

RUN_FILE = "run.json"


class RunError(ValueError):
    """A run directory that cannot be read: reported in one line."""


def write_run(
    directory: Path, manifest: dict[str, Any], reports: Sequence[CompareReport], partial: bool
) -> None:
    rows = [row for report in reports for row in render_compare.summary_rows(report)]
    tables = [render_compare.compare_table(report, "table") for report in reports]
    markdown = [render_compare.compare_table(report, "markdown") for report in reports]
    banner = "[PARTIAL: interrupted before the last point]\n\n" if partial else ""
    files = {
        RUN_FILE: render.dumps(
            {"manifest": manifest, "partial": partial, "reports": list(reports)}
        ),
        "summary.csv": render_compare.csv_text(rows),
        "report.txt": banner + "\n\n".join(tables),
        "report.md": banner + "\n\n".join(markdown),
        "manifest.json": render.dumps(manifest),
    }
    for name, text in files.items():
        render.write_atomically(directory / name, text + "\n")


def report_from_dict(data: dict[str, Any]) -> CompareReport:
    return CompareReport.from_dict(data)


def load_run(directory: Path) -> tuple[dict[str, Any], list[CompareReport], bool]:
    """(manifest, reports, partial) of a saved run."""
    path = directory / RUN_FILE
    try:
        data = json.loads(path.read_text())
        reports = [report_from_dict(r) for r in data["reports"]]
    except FileNotFoundError:
        raise RunError(f"{directory} is not a gemmreg run (no {RUN_FILE})") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise RunError(f"{path} is not a readable gemmreg run: {error}") from None
    return data.get("manifest", {}), reports, bool(data.get("partial"))
