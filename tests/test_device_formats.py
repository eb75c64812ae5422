"""``--format`` on a run spread over two device models (``--devices``):
table and markdown get one section per model (a markdown heading, so the page
renders two tables), csv and json none, their rows naming each device in
``device_name`` and ``device_index`` columns. Records in, text out: no GPU."""

from __future__ import annotations

import csv
import io
import json

import attrs
from gemmreg.contract.records import Problem
from gemmreg.reporting import render_sweep, render_verdicts
from gemmreg.timing.timing_records import CompareReport, KernelSummary, Verdict

H200, A100 = "NVIDIA H200", "NVIDIA A100-SXM4-80GB"


def _summary(name: str, ms: float) -> KernelSummary:
    return KernelSummary(
        kernel=name,
        package="p",
        precision="ieee_fp32",
        math="ieee_fp32",
        generator="g",
        status="timed",
        process_medians_ms=(ms, ms, ms),
        center_ms=ms,
        low_ms=ms,
        high_ms=ms,
        tflops=1.0,
    )


def _report(model: str, index: int, n: int) -> CompareReport:
    verdict = Verdict(
        baseline="base",
        kernel="fast",
        verdict="faster",
        speedup=2.0,
        interval=(1.9, 2.1),
        explanation="",
    )
    return CompareReport(
        problem=Problem(m=n, n=n, k=n),
        processes=3,
        seed=1,
        clock="test",
        device_name=model,
        device_index=index,
        summaries=(_summary("base", 2.0), _summary("fast", 1.0)),
        verdicts=(verdict,),
        runs=(),
    )


RUN = [_report(H200, 0, 64), _report(H200, 2, 128), _report(A100, 1, 64), _report(A100, 1, 128)]


def test_markdown_gets_a_heading_per_model_and_the_terminal_a_ruled_line():
    for render in (render_sweep.sweep_table, render_verdicts.verdict_table):
        page = render(RUN, "markdown")
        assert page.index(f"### On {H200} (2 points)\n\n|") < page.index(
            f"### On {A100} (2 points)"
        )
        assert "== on" not in page
        text = render(RUN, "table")
        assert text.index(f"== on {H200} (2 points) ==") < text.index(f"== on {A100} (2 points) ==")
        assert "###" not in text


def test_csv_has_no_sections_but_names_each_rows_device():
    for text in (render_sweep.sweep_table(RUN, "csv"), render_verdicts.verdict_table(RUN, "csv")):
        assert "== on" not in text and "###" not in text
        rows = list(csv.DictReader(io.StringIO(text)))
        placed = {(row["device_name"], row["device_index"], row["m"]) for row in rows}
        assert placed == {
            (H200, "0", "64"),
            (H200, "2", "128"),
            (A100, "1", "64"),
            (A100, "1", "128"),
        }


def test_json_verdicts_name_each_rows_device():
    document = json.loads(render_verdicts.verdict_table(RUN, "json"))
    assert [(v["device_name"], v["device_index"]) for v in document["verdicts"]] == [
        (H200, 0),
        (H200, 2),
        (A100, 1),
        (A100, 1),
    ]


def test_one_model_renders_as_it_always_did():
    one = [attrs.evolve(r, device_name=H200) for r in RUN]
    assert "== on" not in render_sweep.sweep_table(one, "table")
    assert "###" not in render_verdicts.verdict_table(one, "markdown")
