"""``report RUN --regimes``: each pair's word in every timing regime, checked
against the report's own per-regime lines for the same saved H200 runs (the
split-K pairs run of December 2026: 24 pairs in three regimes, two of them
disagreeing with the verdict in device kernels), and refused, in one line,
where it cannot apply."""

from __future__ import annotations

import csv
import re

import attrs
import pytest
from conftest import REPO
from gemmreg.reporting import render_compare, render_regimes, runs
from offline_cli import forbid_work, run_main

SESSION = REPO / "evidence" / "2026-12-03-h200-kernel-speed-verdicts"
PAIRS = SESSION / "p1" / "splitkpairs-1"
"""12 processes, the device-kernel regime judged across 12 profiling processes."""
ONE_POINT = SESSION / "d1" / "dev24"
REGIME_LINE = re.compile(
    r"^  (graph replay|device kernels): (\w+) ([\d.]+)x \(([\d.]+ to [\d.]+)\)$"
)


def table_rows(text: str) -> dict[tuple[str, str, str], list[str]]:
    """The terminal table's rows by (shape, dtype, pair), cells split on the
    two-space gaps tabulate leaves between columns."""
    rows = {}
    for line in text.splitlines()[2:]:
        cells = re.split(r"\s{2,}", line.strip())
        rows[(cells[0], cells[1], cells[2])] = cells[3:]
    return rows


def test_every_cell_matches_the_reports_own_regime_lines():
    """The table says, pair by pair, what ``report RUN``'s verdict lines say:
    the headline word, and each other regime's word, estimate and interval."""
    _, reports, _ = runs.load_run(PAIRS)
    rows = table_rows(render_regimes.regime_table(reports, "table"))
    assert len(rows) == 24
    for report in reports:
        p = report.problem
        lines = render_compare.verdict_lines(report)
        for v in report.verdicts:
            cells = rows[(p.shape, p.dtype, f"{v.kernel} vs {v.baseline}")]
            assert cells[0] == v.verdict.upper()
            start = lines.index(
                next(x for x in lines if x.startswith(f"verdict: {v.kernel} vs {v.baseline}:"))
            )
            said = {}
            for line in lines[start + 1 :]:
                if not line.startswith("  "):
                    break
                if m := REGIME_LINE.match(line):
                    said[m[1]] = f"{m[2].upper()} {m[3]}x ({m[4]})"
            assert said["graph replay"] == cells[2]
            assert said["device kernels"] == cells[3]


def test_the_table_shows_a_device_kernel_word_the_verdict_table_folds_away():
    """At 128x128x32768 bf16 split-K is FASTER end to end but INCONCLUSIVE in
    device kernels over 12 profiling processes, and EQUIVALENT over 24."""
    _, reports, _ = runs.load_run(PAIRS)
    rows = table_rows(render_regimes.regime_table(reports, "table"))
    cells = rows[("128x128x32768", "bf16", "splitk vs torch_ref")]
    assert cells[0] == "FASTER" and cells[1].startswith("FASTER 1.037x")
    assert cells[3] == "INCONCLUSIVE 1.003x (0.9959 to 1.011)"
    _, again, _ = runs.load_run(ONE_POINT)
    cells = table_rows(render_regimes.regime_table(again, "table"))[
        ("128x128x32768", "bf16", "splitk vs torch_ref")
    ]
    assert cells[3] == "EQUIVALENT 1.001x (0.9962 to 1.005)"


def test_csv_has_one_row_per_pair_and_regime_with_the_primary_marked():
    _, reports, _ = runs.load_run(PAIRS)
    rows = list(csv.DictReader(render_regimes.regime_table(reports, "csv").splitlines()))
    assert list(rows[0]) == list(render_regimes.REGIME_COLUMNS)
    assert len(rows) == 24 * 3
    primary = [r for r in rows if r["primary"] == "True"]
    assert len(primary) == 24 and {r["regime"] for r in primary} == {"end-to-end"}
    for row in primary:  # no kernel here is invalid: the verdict is the primary regime's word
        assert row["word"] == row["verdict"]
    device = [r for r in rows if r["regime"] == "device kernels"]
    assert all(r["settled"] == "True" and "12 profiling processes" in r["reason"] for r in device)
    for row in rows:
        assert float(row["low"]) <= float(row["estimate"]) <= float(row["high"])


def test_a_verdict_without_regimes_keeps_its_word_and_shows_dashes():
    """No timing, or an interpreted kernel against a native one: no regime
    was judged, so every regime cell is a dash, never a borrowed figure."""
    _, reports, _ = runs.load_run(ONE_POINT)
    first = reports[0]
    bare = attrs.evolve(first.verdicts[0], verdict="no verdict", regimes=())
    report = attrs.evolve(first, verdicts=(bare, *first.verdicts[1:]))
    rows = table_rows(render_regimes.regime_table([report], "table"))
    cells = rows[("128x128x32768", "bf16", f"{bare.kernel} vs {bare.baseline}")]
    assert cells == ["NO VERDICT", "-", "-", "-"]
    assert not [
        r
        for r in render_regimes.regime_rows([report])
        if r["kernel"] == bare.kernel and r["baseline"] == bare.baseline
    ]


@pytest.mark.parametrize(
    "args",
    [
        [str(ONE_POINT), "--regimes", "--verdicts"],
        [str(ONE_POINT), str(PAIRS), "--regimes"],
        [str(ONE_POINT), str(PAIRS), "--verdicts"],
    ],
    ids=["with --verdicts", "two runs", "--verdicts of two runs"],
)
def test_regimes_where_it_cannot_apply_is_one_line_and_exit_2(args, monkeypatch, capsys):
    """Before, ``report BEFORE AFTER --verdicts`` printed the changes and
    dropped the option without a word."""
    forbid_work(monkeypatch)
    run_main(["report", *args], capsys).assert_refused()


def test_regimes_from_the_command_line(capsys):
    done = run_main(["report", str(ONE_POINT), "--regimes"], capsys)
    assert done.code == 0, done.err
    header = done.out.splitlines()[0].split()
    assert header[:4] == ["shape", "dtype", "pair", "verdict"]
    assert "EQUIVALENT 1.001x (0.9962 to 1.005)" in done.out


TWO_ONE_SIDED = REPO / "evidence" / "2026-12-04-h200-llm-projections" / "bf16-2048-8192" / "bench"
"""A sweep where one graph-replay regime was decided by two one-sided tests
(its interval at 99%, the verdict's at 99.5%)."""


def test_each_regime_row_carries_its_own_intervals_confidence():
    """The row says the level of the interval it shows, never the verdict's
    beside an interval taken at another level."""
    _, reports, _ = runs.load_run(TWO_ONE_SIDED)
    pairs = [(v, r) for report in reports for v in report.verdicts for r in v.regimes]
    rows = render_regimes.regime_rows(reports)
    assert len(rows) == len(pairs)
    shown = [
        (row["confidence"], r.interval.confidence)
        for row, (_, r) in zip(rows, pairs, strict=True)
        if r.interval
    ]
    assert shown and all(row == own for row, own in shown)
    assert any(r.interval and r.interval.confidence != v.confidence for v, r in pairs)
