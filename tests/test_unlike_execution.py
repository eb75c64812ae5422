"""A kernel under Triton's interpreter beside a native one: the figures are
shown, no speed word is, in every view of a saved run and in a comparison
of two runs."""

from __future__ import annotations

import math

import attrs
from conftest import run_gemmreg
from gemmreg.contract.records import Problem
from gemmreg.reporting import regression, render_compare, runs
from gemmreg.timing.timing_records import CompareReport, KernelSummary, ProcessRecord
from gemmreg.timing.verdicts import all_verdicts, pair_key


def summary(name: str, ms: float, execution: str) -> KernelSummary:
    return KernelSummary(
        kernel=name,
        package="p 1",
        precision="ieee_fp32",
        math="ieee_fp32",
        generator="normal",
        status="timed",
        execution=execution,
        process_medians_ms=(ms, ms * 1.01, ms * 0.99),
        center_ms=ms,
        low_ms=ms * 0.99,
        high_ms=ms * 1.01,
    )


def unlike_report() -> CompareReport:
    """A native kernel 25x faster than an interpreted one, in three processes."""
    summaries = (summary("native", 1.0, "native"), summary("interp", 25.0, "interpreted"))
    ratio = {"end-to-end": {pair_key("native", "interp"): -math.log(25.0)}}
    records = tuple(ProcessRecord(process=p, status="ok", log_ratios=ratio) for p in range(3))
    return CompareReport(
        problem=Problem(m=32, n=32, k=32),
        processes=3,
        seed=1,
        clock="test",
        device_name="cpu",
        summaries=summaries,
        verdicts=all_verdicts(summaries, records, confidence=0.995, margin=0.01),
        runs=(),
        records=records,
        margin=0.01,
        confidence=0.995,
    )


def test_every_view_of_an_unlike_pair_shows_the_figures_and_no_speed_word(tmp_path):
    report = unlike_report()
    text = render_compare.compare_table(report, "table")
    (said,) = [line for line in text.splitlines() if line.startswith("verdict:")]
    assert said.startswith("verdict: interp vs native: NO VERDICT;")
    assert "UNLIKE EXECUTION: interp runs under Triton's interpreter" in text
    assert "25" in text  # the interpreted kernel's median stays in the table
    runs.write_run(tmp_path / "run", {"backend": "cpu"}, [report], partial=False)
    listed = run_gemmreg("report", str(tmp_path / "run"), "--verdicts")
    assert listed.returncode == 0, listed.stderr
    assert "NO VERDICT" in listed.stdout and "UNLIKE EXECUTION" in listed.stdout
    assert "0.04x" not in listed.stdout  # no ratio column for the pair
    rejudged = run_gemmreg("report", str(tmp_path / "run"), "--margin", "50", "--format", "json")
    assert rejudged.returncode == 0, rejudged.stderr
    assert '"no verdict"' in rejudged.stdout and '"slower"' not in rejudged.stdout
    csv = run_gemmreg("report", str(tmp_path / "run"), "--format", "csv")
    header, native_row, interp_row = csv.stdout.splitlines()
    assert "execution" in header.split(",")
    assert ",native," in native_row and ",interpreted," in interp_row


def test_a_kernel_interpreted_in_one_run_and_native_in_the_other_gets_no_change_verdict():
    native = unlike_report()
    interpreted = attrs.evolve(
        native, summaries=(summary("native", 25.0, "interpreted"), native.summaries[1])
    )
    changes = regression.compare_runs([native], [interpreted], threshold_pct=5)
    moved = next(c for c in changes if c.kernel == "native")
    assert moved.verdict == "no verdict" and not moved.regression
    assert moved.explanation.startswith("UNLIKE EXECUTION: before ran natively")
    same = next(c for c in changes if c.kernel == "interp")
    assert same.verdict == "equivalent"
