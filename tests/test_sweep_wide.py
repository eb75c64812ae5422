"""A sweep's verdicts read at the level of the whole sweep. Each point's pairs
keep a false claim at that point within 0.5%; over a sweep's points those
chances add up (20 points: 10%). The line under a sweep's means says so and
names the command that judges the points together (``report --sweep-wide``:
Bonferroni over the judged points), whose claims then hold at 99.5% all at once.
``bench --sweep-wide`` judges them so from the start (its budget aimed at that
level, its gate reading it), and ``report --fail-on`` gates a saved run's
verdicts as judged there."""

from __future__ import annotations

import csv
import io
import shlex
from pathlib import Path

import attrs
import pytest
from conftest import run_gemmreg
from gemmreg.reporting import runs, speedup_means
from gemmreg.timing import rejudging, stats
from offline_cli import run_main

ROOT = Path(__file__).resolve().parents[1]
LLM = ROOT / "evidence/2026-12-04-h200-llm-projections"
PARTS = [str(LLM / "bf16-1-16-128/bench"), str(LLM / "bf16-2048-8192/bench")]
"""Llama 3 8B's 20 projections, bf16, triton_tuned against cuBLAS, in two parts (H200)."""


def table(argv: list[str], capsys) -> dict[str, dict[str, str]]:
    """``report ... --verdicts --format csv``'s rows by shape."""
    shown = run_main([*argv, "--verdicts", "--format", "csv"], capsys)
    assert shown.code == 0, shown.err
    read = csv.DictReader(io.StringIO(shown.out))
    return {f"{r['m']}x{r['n']}x{r['k']}": r for r in read}


def span(row: dict[str, str]) -> tuple[float, float]:
    return float(row["speedup_low"]), float(row["speedup_high"])


def test_a_sweep_judged_point_by_point_bounds_a_false_claim_among_its_points(capsys):
    per_point = run_main(["report", *PARTS, "--parts", "--verdicts"], capsys)
    assert per_point.code == 0, per_point.err
    (line,) = [x for x in per_point.out.splitlines() if x.startswith("verdicts: ")]
    command = f"gemmreg report {' '.join(map(shlex.quote, PARTS))} --parts --sweep-wide"
    assert line == (
        "verdicts: each point's at 99.5% on its own; over 20 points a false claim somewhere "
        f"among them is bounded by 10%: `{command}` judges them at 99.5% together"
    )
    wide = run_main([*shlex.split(command)[1:], "--verdicts"], capsys)
    assert wide.code == 0, wide.err
    assert (
        "verdicts judged again from the recorded processes, at 99.5% across the sweep's "
        "20 judged points together (99.975% at each)" in wide.err
    )
    # the document itself says the level its verdicts now hold at
    (together,) = [x for x in wide.out.splitlines() if x.startswith("verdicts: ")]
    assert together == (
        "verdicts: at 99.5% across the sweep's 20 points together (each point's at 99.975%)"
    )
    # the mean is one statement per pair, already at the run's level: unchanged
    means = [x for x in per_point.out.splitlines() if "geometric-mean" in x]
    assert means == [x for x in wide.out.splitlines() if "geometric-mean" in x]
    before = table(["report", *PARTS, "--parts"], capsys)
    after = table([*shlex.split(command)[1:]], capsys)
    assert len(before) == len(after) == 20
    for shape, row in before.items():
        (low, high), (wide_low, wide_high) = span(row), span(after[shape])
        assert wide_low < low and high < wide_high, shape
        assert float(after[shape]["confidence"]) == pytest.approx(1 - 0.005 / 20)
    # A FASTER at 1.03x and a SLOWER whose interval reached 0.9986 are not shown at the
    # sweep's level; slowdowns under 1% shown within the margin per point are still
    # shown, but no longer within it.
    words = {s: (before[s]["verdict"], after[s]["verdict"]) for s in before}
    assert {s: w for s, w in words.items() if w[0] != w[1]} == {
        "128x1024x4096": ("faster", "inconclusive"),
        "128x14336x4096": ("slower", "inconclusive"),
        "2048x4096x4096": ("equivalent", "slower"),
        "2048x4096x14336": ("equivalent", "slower"),
    }


def test_parts_each_judged_together_say_so_and_what_they_amount_to_together():
    """Two ``bench --sweep-wide`` commands (the H200 parts, judged again each
    over its own points): each part holds at 99.5%, the two at 1%."""
    parts = []
    for part in PARTS:
        _, reports, _ = runs.load_run(Path(part))
        points = rejudging.judged_points(reports)
        parts += [rejudging.rejudge(r, stats.DEFAULT_MARGIN, points) for r in reports]
    assert sorted({r.family for r in parts}) == [8, 12]
    (line,) = speedup_means.sweep_level_lines(parts, "c")
    assert line == (
        "verdicts: at 99.5% within each part's points judged together (12 points, 8 points); "
        "over 20 points a false claim somewhere among them is bounded by 1%: `c` judges them "
        "at 99.5% together"
    )
    alone = [attrs.evolve(r, family=1) for r in parts[:12]] + parts[12:]
    assert speedup_means.sweep_level_lines(alone, "c")[0].startswith(
        "verdicts: at 99.5% within each part's points judged together (8 points, alone); "
    )


def test_each_point_is_judged_at_the_level_that_keeps_the_sweep_at_the_runs():
    _, reports, _ = runs.load_run(Path(PARTS[0]))
    points = rejudging.judged_points(reports)
    assert points == len(reports) == 12
    for report in reports:
        (verdict,) = rejudging.rejudge(report, stats.DEFAULT_MARGIN, points).verdicts
        assert verdict.confidence == pytest.approx(1 - 0.005 / points)


def test_points_that_claim_nothing_are_not_counted():
    _, reports, _ = runs.load_run(Path(PARTS[0]))
    (verdict,) = reports[0].verdicts
    invalid = attrs.evolve(reports[0], verdicts=(attrs.evolve(verdict, verdict="invalid"),))
    unjudged = attrs.evolve(reports[1], verdicts=(attrs.evolve(verdict, confidence=None),))
    assert rejudging.judged_points([invalid, unjudged, *reports[2:]]) == len(reports) - 2
    assert speedup_means.sweep_level_lines(reports[:1], "c") == []  # one point: nothing to add


def test_sweep_wide_takes_one_run_or_its_parts(capsys):
    run_main(["report", *PARTS, "--sweep-wide"], capsys).assert_refused()
    run_main(["report", *PARTS, PARTS[0], "--sweep-wide"], capsys).assert_refused()


def test_sweep_wide_on_one_judged_point_would_change_nothing_and_is_refused(tmp_path, capsys):
    manifest, reports, _ = runs.load_run(Path(PARTS[0]))
    runs.write_run(tmp_path / "one", manifest, reports[:1], partial=False)
    refused = run_main(["report", str(tmp_path / "one"), "--sweep-wide"], capsys)
    refused.assert_refused()
    assert "this run has 1 judged point, so it would change nothing" in refused.err


def test_bench_names_the_command_that_judges_its_sweep_whole(fake_plugins, tmp_path):
    """The line under a sweep's means comes from ``bench`` itself, naming the
    run it saved; the command it names reads that run at the sweep's level."""
    fake_plugins("good")
    out = tmp_path / "sweep"
    done = run_gemmreg(
        *("bench", "torch_ref", "fake_good", "--shape", "8x8x8,16x8x8", "--processes", "3"),
        *("--repeats", "3", "--warmup", "1", "--out", str(out)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    command = f"gemmreg report {shlex.quote(str(out))} --sweep-wide"
    assert done.stdout.rstrip().splitlines()[-1] == (
        "verdicts: each point's at 99.5% on its own; over 2 points a false claim somewhere "
        f"among them is bounded by 1%: `{command}` judges them at 99.5% together"
    )
    wide = run_gemmreg(*shlex.split(command)[1:], "--verdicts")
    assert wide.returncode == 0, wide.stderr
    assert "at 99.5% across the sweep's 2 judged points together (99.75% at each)" in wide.stderr
