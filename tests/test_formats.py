"""``--format`` on every command that prints rows, as a user pastes and parses
it: markdown whose every table row is one line with the header's cell count,
CSV whose figures ``float()`` reads, JSON that is one object with its schema
and kind. Records come from saved H200 runs and checks under ``evidence/``;
the commands run in-process with their timing and checking replaced by those
records (rendering is what is under test, not the workers)."""

from __future__ import annotations

import csv
import json
import re

import pytest
from conftest import REPO
from gemmreg.checking import check_runner
from gemmreg.cli import build_parser
from gemmreg.fanout import sweeping
from gemmreg.reporting import check_files, formats, runs
from gemmreg.reporting.formats import FORMATS
from gemmreg.timing import worker_pool
from offline_cli import run_main

SESSION = REPO / "evidence" / "2026-11-30-h200-verdict-calibration" / "run-a" / "g0"
KNOWN, AA = SESSION / "knownbench-1", SESSION / "aabench-1"
BEFORE = REPO / "evidence" / "2026-11-30-h200-verdict-evidence" / "knownbench-1"
"""A run at the same points as KNOWN, a commit earlier: ``report BEFORE KNOWN``."""
CHECKS = [
    REPO / "evidence" / "2026-11-30-h200-check",
    REPO / "evidence" / "2026-11-30-h200-sanitize" / "triton_grouped",
    REPO / "evidence" / "2026-11-30-h200-verdict-evidence" / "hostile-check-hang",
]
SUMMARY_NUMBERS = (
    *("m", "n", "k", "center_ms", "low_ms", "high_ms", "tflops", "ideal_gbps", "max_error", "rtol"),
    "outlier_processes",
)
NUMERIC = {
    "gemmreg.run": SUMMARY_NUMBERS,
    "gemmreg.compare": SUMMARY_NUMBERS,
    "gemmreg.verdicts": (
        "m",
        "n",
        "k",
        "ms",
        "baseline_ms",
        "speedup",
        "speedup_low",
        "speedup_high",
        "ceiling",
    ),
    "gemmreg.changes": (
        *("before_ms", "before_low_ms", "before_high_ms", "after_ms", "after_low_ms"),
        *("after_high_ms", "change_pct", "change_low_pct", "change_high_pct"),
    ),
    "gemmreg.regimes": ("m", "n", "k", "estimate", "low", "high"),
    "gemmreg.list": ("rtol", "atol"),
    "gemmreg.check": ("m", "n", "k", "seed", "max_error", "rtol", "atol"),
}
"""Per kind, the CSV columns that hold figures: each one must be filled in
some row, and ``float()`` must read every filled cell."""
UNRECORDED = {("gemmreg.check", "rtol"), ("gemmreg.check", "atol")}
"""Figures the saved H200 checks predate (their comparisons kept no tolerance):
empty there, numbers where filled."""
ROWS_KEY = {
    "gemmreg.run": "reports",
    "gemmreg.compare": "report",
    "gemmreg.verdicts": "verdicts",
    "gemmreg.regimes": "regimes",
    "gemmreg.changes": "changes",
    "gemmreg.list": "plugins",
    "gemmreg.check": "cases",
}


def markdown_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each table in ``text`` as a reader of GitHub markdown takes it: a header
    line, a delimiter line, then every line up to the next blank one is a row."""
    lines, tables, index = text.splitlines(), [], 0
    while index < len(lines) - 1:
        if lines[index].startswith("|") and re.fullmatch(r"\|[-:| ]+\|", lines[index + 1]):
            header = cells(lines[index])
            index += 2
            rows = []
            while index < len(lines) and lines[index].strip():
                rows.append(cells(lines[index]))
                index += 1
            tables.append((header, rows))
        index += 1
    return tables


def cells(line: str) -> list[str]:
    """A markdown row's cells; ``\\|`` is a pipe inside a cell."""
    assert line.startswith("|") and line.endswith("|"), f"not a table row: {line!r}"
    return [c.strip() for c in re.split(r"(?<!\\)\|", line[1:-1])]


def assert_markdown(text: str, tables: int) -> None:
    found = markdown_tables(text)
    assert len(found) == tables, text
    for header, rows in found:
        assert rows, header
        for row in rows:
            assert len(row) == len(header), (header, row)
            assert row[0], f"a continuation row: {row}"  # every row names its subject


def assert_csv(text: str, kind: str) -> list[dict[str, str]]:
    reader = csv.DictReader(text.splitlines())
    rows = list(reader)
    assert rows, text
    for row in rows:
        assert None not in row and None not in row.values(), row  # the header's width, exactly
    for column in NUMERIC[kind]:
        filled = [row[column] for row in rows if row[column] != ""]
        assert filled or (kind, column) in UNRECORDED, f"{kind}: column {column} is never filled"
        for value in filled:
            float(value)
    return rows


def assert_json(text: str, kind: str) -> dict:
    data = json.loads(text)
    assert isinstance(data, dict)
    assert isinstance(data["schema"], int) and data["kind"] == kind
    assert list(data)[:2] == ["schema", "kind"]
    assert data[ROWS_KEY[kind]]
    return data


@pytest.fixture
def replayed(monkeypatch):
    """compare, bench and check answered from the saved records, in-process."""
    monkeypatch.setenv(worker_pool.START_AHEAD_ENV, "0")
    manifest, reports, _ = runs.load_run(KNOWN)

    def compare(*args, **kwargs):
        return reports[0], manifest

    def sweep(job):
        job.progress("[1/2] timing (replayed)")
        sweeping.save(job.out, manifest, reports, False)
        return sweeping.Sweep(reports=tuple(reports), partial=False)

    saved, _ = check_files.load_check(CHECKS[0])

    def run_check(kernels, cases, gpu, on_result, task_timeout=None):
        for result in saved:
            on_result(result)

    monkeypatch.setattr(sweeping, "compare", compare)
    monkeypatch.setattr(sweeping, "sweep", sweep)
    monkeypatch.setattr(check_runner, "run_check", run_check)


COMMANDS = {
    "list": (["list"], "gemmreg.list", 1),
    "check": (["check", "torch_ref", "--dtype", "fp32"], "gemmreg.check", 1),
    "compare": (
        ["compare", "torch_ref", "triton_grouped", "--shape", "8x8x8"],
        "gemmreg.compare",
        1,
    ),
    "bench": (["bench", "torch_ref", "--shape", "8"], "gemmreg.run", 1),
    "report": (["report", str(KNOWN)], "gemmreg.run", 3),  # two points, then their verdicts
    "report --verdicts": (["report", str(AA), "--verdicts"], "gemmreg.verdicts", 1),
    "report --regimes": (["report", str(AA), "--regimes"], "gemmreg.regimes", 1),
    "report BEFORE AFTER": (["report", str(BEFORE), str(KNOWN)], "gemmreg.changes", 1),
}
"""Each command: its arguments, its JSON kind, its markdown tables."""


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_honours_every_format(command, fmt, replayed, tmp_path, capsys):
    args, kind, tables = COMMANDS[command]
    if command == "bench":
        args = [*args, "--out", str(tmp_path / "run")]
    done = run_main([*args, "--format", fmt], capsys)
    assert done.code in (0, 1), done.err  # 1: a saved check with failures in it
    if fmt == "markdown":
        assert_markdown(done.out, tables)
    elif fmt == "csv":
        assert_csv(done.out, kind)
    elif fmt == "json":
        assert_json(done.out, kind)
    else:  # the terminal's table: no markdown rows, not a document
        assert not markdown_tables(done.out) and not done.out.startswith("{"), done.out


def test_one_format_option_for_every_command():
    """The same choices everywhere, from one definition."""
    parser = build_parser()
    for args, _, _ in COMMANDS.values():
        for fmt in FORMATS:
            assert parser.parse_args([*args, "--format", fmt]).format == fmt


@pytest.mark.parametrize("folder", CHECKS, ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["markdown", "csv", "json"])
def test_saved_checks_in_every_format(folder, fmt):
    """Checks with skips, sanitizer verdicts and a hang: each case one row."""
    from gemmreg.reporting import render

    results, partial = check_files.load_check(folder)
    text = render.check_output(results, fmt, partial)
    if fmt == "markdown":
        assert_markdown(text, 1)
    elif fmt == "csv":
        rows = assert_csv(text, "gemmreg.check")
        assert len(rows) == len(results)
    else:
        data = assert_json(text, "gemmreg.check")
        assert check_files.results_from_dict(data) == results  # still a check.json


def test_the_precision_cell_no_longer_wraps_in_markdown():
    """The precision of a bf16 row once wrapped over two table rows."""
    from gemmreg.reporting import render_compare

    _, reports, _ = runs.load_run(KNOWN)
    text = render_compare.compare_table(reports[0], "markdown")
    assert "| bf16 (torch.mm, reduced-precision reduction off) |" in text
    assert_markdown(text, 1)
    terminal = render_compare.compare_table(reports[0], "table")
    assert "reduced-precision" not in terminal  # the terminal's table still wraps it


def test_a_pipe_and_a_line_break_stay_inside_their_markdown_cell():
    text = formats.get("markdown").table([["a|b", "one\ntwo"], ["c", "d"]], ["x", "y"])
    (header, rows), *_ = markdown_tables(text)
    assert rows == [["a\\|b", "one<br>two"], ["c", "d"]] and header == ["x", "y"]


def test_json_of_a_run_is_the_run_again(tmp_path, capsys):
    """``report RUN --format json`` is ``run.json`` with its kind: saved again, it reads back."""
    done = run_main(["report", str(KNOWN), "--format", "json"], capsys)
    (tmp_path / "run.json").write_text(done.out)
    again = runs.load_run(tmp_path)
    assert again == runs.load_run(KNOWN)


def test_before_after_csv_keeps_each_figure_in_its_own_column(capsys):
    """Not ``0.008639 (0.005039-12.91)``: the median and both ends, as numbers."""
    done = run_main(["report", str(BEFORE), str(KNOWN), "--format", "csv"], capsys)
    for row in assert_csv(done.out, "gemmreg.changes"):
        low, mid, high = (float(row[f"after_{k}ms"]) for k in ("low_", "", "high_"))
        assert low <= mid <= high
