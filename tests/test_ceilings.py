"""The ceiling on a verdict's speedup (:mod:`gemmreg.timing.ceilings`): the
baseline's time over the least time the kernel's work can take under the
device's datasheet roofs. Checked on committed H200 runs against figures the
core computes elsewhere (the baseline's % of peak, the memory-roof veto's
bytes), and absent where no roof is known."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import attrs
import pytest
from gemmreg.reporting import runs
from gemmreg.reporting.render_verdicts import verdict_table
from gemmreg.timing.ceilings import speedup_ceiling
from gemmreg.timing.peaks import device_peaks
from gemmreg.timing.vetoes import read_bytes

ROOT = Path(__file__).resolve().parents[1]
GROUPED = ROOT / "evidence/2026-12-04-h200-fp8-llm-and-grouped-roof/grouped"
"""Mixtral's expert GEMMs, bf16: two prefill points (compute-bound) and two
decode points (memory-bound)."""


def points() -> list:
    _, reports, _ = runs.load_run(GROUPED)
    return reports


def baseline(report, verdict):
    return next(s for s in report.summaries if s.kernel == verdict.baseline)


def test_at_a_compute_bound_point_the_ceiling_is_the_baseline_s_distance_to_peak():
    prefill = [r for r in points() if r.problem.m > 1024]
    assert len(prefill) == 2
    for report in prefill:
        (verdict,) = report.verdicts
        ceiling = speedup_ceiling(report, verdict)
        assert ceiling is not None and ceiling.roof == "compute"
        # both kernels run bf16 math: the most they can gain is what the
        # baseline leaves of the peak its own % of peak is taken against
        assert ceiling.speedup == pytest.approx(100 / baseline(report, verdict).percent_of_peak)
        assert 1.25 < ceiling.speedup < 1.35  # a 1.3x goal sits at or above the roof here


def test_at_a_memory_bound_point_the_ceiling_is_reading_a_and_b_once():
    decode = [r for r in points() if r.problem.m < 64]
    assert len(decode) == 2
    bandwidth = device_peaks("NVIDIA H200").memory_tb_s * 1e12
    for report in decode:
        (verdict,) = report.verdicts
        ceiling = speedup_ceiling(report, verdict)
        assert ceiling is not None and ceiling.roof == "memory"
        floor_ms = read_bytes(report.problem) / bandwidth * 1e3
        assert ceiling.speedup == pytest.approx(baseline(report, verdict).center_ms / floor_ms)
        assert ceiling.speedup > verdict.speedup  # an honest kernel stays under it


def test_the_verdict_table_shows_the_ceiling_and_its_roof():
    reports = points()
    text = verdict_table(reports, "table")
    assert "ceiling" in text.splitlines()[0]
    assert "x compute" in text and "x memory" in text
    rows = list(csv.DictReader(io.StringIO(verdict_table(reports, "csv"))))
    assert {row["ceiling_roof"] for row in rows} == {"compute", "memory"}
    assert all(float(row["ceiling"]) > float(row["speedup"]) for row in rows)


def test_without_a_known_peak_there_is_no_ceiling():
    unknown = [
        attrs.evolve(
            r,
            device_name="a GPU with no datasheet entry",
            summaries=tuple(attrs.evolve(s, peak_tflops=None) for s in r.summaries),
        )
        for r in points()
    ]
    for report in unknown:
        assert speedup_ceiling(report, report.verdicts[0]) is None
    rows = list(csv.DictReader(io.StringIO(verdict_table(unknown, "csv"))))
    assert rows and all(row["ceiling"] == "" and row["ceiling_roof"] == "" for row in rows)
    lines = verdict_table(unknown, "table").splitlines()
    assert all("x compute" not in line and "x memory" not in line for line in lines)


def test_a_compare_report_names_each_verdict_s_ceiling_and_the_legend_explains_it():
    from gemmreg.reporting import render_compare

    for report in points():
        (verdict,) = report.verdicts
        lines = render_compare.verdict_lines(report)
        expected = speedup_ceiling(report, verdict)
        assert expected is not None
        assert f"  ceiling: {expected.text()} roof (the most any kernel could show here)" in lines
        text = render_compare.compare_table(report, "table")
        assert "ceiling: the baseline's median over the least time" in text
