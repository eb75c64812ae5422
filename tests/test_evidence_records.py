"""What evidence carries with it: the tolerance beside every error, the
switches a run was taken under, one availability answer per command, and
storage that needs no renderer."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import attrs
import pytest
from conftest import REPO, TESTS, run_gemmreg
from gemmreg.contract.records import LOOSE_RTOL, Problem, Tolerance
from gemmreg.discovery.registry import discover
from gemmreg.instruments import environment
from gemmreg.reporting import check_files, checksums, render, render_compare, runs
from gemmreg.timing import summaries
from gemmreg.timing.timing_records import CompareReport, ProcessRun
from offline_cli import run_main

LOOSE = Tolerance(rtol=2e-2, why="A and B rounded to bf16 (8-bit mantissa) before an fp32 product")
"""What tests/fake_plugins/loose.py declares."""
EVIDENCE = REPO / "evidence"
BAD_TOLERANCE = {
    "kernel": "k",
    "case": {"problem": {"m": 1, "n": 1, "k": 1}},
    "status": "pass",
    "comparison": {"passed": True, "tolerance": {"rtol": -1}},
}


@pytest.fixture(scope="module")
def loose_check(tmp_path_factory):
    """``gemmreg check --out`` of a kernel that passes within a loose tolerance."""
    out = tmp_path_factory.mktemp("evidence") / "check"
    env = {
        "PYTHONPATH": str(TESTS),
        "GEMMREG_PLUGINS": "none",
        "GEMMREG_EXTRA_PLUGINS": "fake_plugins.loose",
    }
    done = run_gemmreg(
        "check", "fake_loose", "--dtype", "fp32", "--layout", "rowmajor", "--out", str(out), env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def test_a_saved_check_records_the_tolerance_each_case_was_held_to(loose_check):
    saved = json.loads((loose_check / "check.json").read_text())
    assert saved["schema"] == check_files.CHECK_SCHEMA == 2
    compared = [c for c in saved["cases"] if c["kind"] == "values" and c["status"] != "skip"]
    assert compared and all(c["status"] == "pass" for c in compared)
    assert all(c["comparison"]["tolerance"] == attrs.asdict(LOOSE) for c in compared)
    # The case the record is for: an error fp32 alone would never pass, inside the declared bound.
    worst = max(c["comparison"]["max_error"] for c in compared)
    assert LOOSE_RTOL["fp32"] < worst < LOOSE.rtol
    refusal = [c for c in saved["cases"] if c["kind"] == "refusal"]
    assert refusal and all(c["comparison"] is None for c in refusal)


@pytest.mark.parametrize("name", ["check.txt", "check.md"])
def test_a_check_row_shows_its_error_beside_its_tolerance(loose_check, name):
    text = (loose_check / name).read_text()
    row = next(line for line in text.splitlines() if "rowmajor-128x128x128" in line)
    # the error in |A|@|B|, its bound, and the share of the bound the worst element used
    assert re.search(r"\bpass\s*\|?\s*0\.00\d+ \(tol 0\.02: \d+% used\)", row), row
    assert f"tolerance fake_loose fp32: {LOOSE.why}" in text


def test_a_saved_check_reads_back_and_renders_as_it_was_printed(loose_check):
    results, partial = check_files.load_check(loose_check)
    assert not partial
    held = {r.tolerance for r in results if r.kind == "values" and r.status == "pass"}
    assert held == {LOOSE}
    assert render.check_table(results, "table") + "\n" == (loose_check / "check.txt").read_text()


def test_a_check_saved_before_tolerances_were_kept_still_loads_without_one(loose_check, tmp_path):
    """Today's file less what schema 2 added reads as the same results, with no
    tolerance, and its rows show the error alone."""
    data = json.loads((loose_check / "check.json").read_text())
    del data["schema"], data[checksums.CHECKSUM_KEY]  # both came after tolerances
    for case in data["cases"]:
        if case["comparison"]:
            del case["comparison"]["tolerance"]
    (tmp_path / "check.json").write_text(json.dumps(data))
    old, _ = check_files.load_check(tmp_path)
    today, _ = check_files.load_check(loose_check)
    assert all(r.tolerance is None for r in old)
    assert old == [
        attrs.evolve(r, comparison={k: v for k, v in r.comparison.items() if k != "tolerance"})
        if r.comparison
        else r
        for r in today
    ]
    table = render.check_table(old, "table")
    assert "(tol" not in table and "tolerance fake_loose" not in table
    assert "rowmajor-128x128x128" in table


@pytest.mark.parametrize(
    "folder",
    [
        "2026-11-30-h200-splitk-first-look/check",  # values and refusals
        "2026-11-30-h200-sanitize/mutants",  # sanitizer verdicts; NaN and inf saved as text
    ],
)
def test_committed_evidence_renders_exactly_as_it_was_printed(folder):
    """Checks saved by earlier versions (schema 1: no tolerance) read back and
    render to their own check.txt, byte for byte: nothing is invented for
    them. (Should check_table's layout change on purpose, this comparison
    goes with it; the load must not.)"""
    results, _ = check_files.load_check(EVIDENCE / folder)
    assert all(r.tolerance is None for r in results)
    table = render.check_table(results, "table")
    assert table + "\n" == (EVIDENCE / folder / "check.txt").read_text()
    assert "(tol" not in table


def test_the_oldest_check_layout_loads_with_its_counts():
    """Before the value kinds: problem and seed at the case, the plugin's inputs."""
    folder = EVIDENCE / "2026-11-30-h200-check"
    results, _ = check_files.load_check(folder)
    saved = json.loads((folder / "check.json").read_text())
    assert render.check_counts(results) == saved["counts"]
    assert {r.case.values for r in results} == {"plugin"}
    assert [r.case.seed for r in results] == [c["seed"] for c in saved["cases"]]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"schema": 3, "cases": []}', "schema 3 is not one this gemmreg reads"),
        ('{"cases": [{"kernel": "k"}]}', "cases[0]: missing field 'case'"),
        (
            json.dumps({"cases": [BAD_TOLERANCE]}),
            "field 'rtol': must be a finite, non-negative number",
        ),
        ("{", "not JSON"),
    ],
)
def test_an_unreadable_check_is_one_line_naming_the_file(tmp_path, content, words):
    (tmp_path / "check.json").write_text(content)
    with pytest.raises(check_files.CheckFileError, match=re.escape(words)) as caught:
        check_files.load_check(tmp_path)
    assert str(tmp_path / "check.json") in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_timing_summary_carries_the_declared_tolerance(fake_plugins, tmp_path):
    fake_plugins("loose")
    found = discover(env={"GEMMREG_PLUGINS": "none"}, extra_plugins=["fake_plugins.loose"])
    (kernel,) = found.select(["fake_loose"])
    problem = Problem(m=8, n=8, k=8)
    timed = ProcessRun(kernel="fake_loose", process=0, status="timed", round_ms=(1.0, 1.1))
    summary = summaries.summarize(kernel, problem, [timed], None, "cpu")
    assert (summary.rtol, summary.atol, summary.tolerance_why) == (LOOSE.rtol, 0.0, LOOSE.why)
    report = CompareReport(
        problem=problem,
        processes=1,
        seed=1,
        clock="test",
        device_name="cpu",
        summaries=(attrs.evolve(summary, max_error=4e-3),),
        verdicts=(),
        runs=(timed,),
    )
    assert "0.004 (tol 0.02)" in _row(render_compare.compare_table(report, "table"), "fake_loose")

    # A run saved before the tolerance was kept still reads, and shows the error alone.
    runs.write_run(tmp_path, {}, [report], partial=False)
    data = json.loads((tmp_path / runs.RUN_FILE).read_text())
    del data[checksums.CHECKSUM_KEY]  # checksums came after tolerances too
    for field in ("rtol", "atol", "tolerance_why"):
        del data["reports"][0]["summaries"][0][field]
    (tmp_path / runs.RUN_FILE).write_text(json.dumps(data))
    _, (old,), _ = runs.load_run(tmp_path)
    assert old.summaries[0].rtol is None
    row = _row(render_compare.compare_table(old, "table"), "fake_loose")
    assert "0.004" in row and "(tol" not in row


def _row(table: str, kernel: str) -> str:
    return next(line for line in table.splitlines() if line.startswith(kernel))


def test_a_manifest_records_the_switches_a_run_was_taken_under(monkeypatch):
    monkeypatch.setenv("GEMMREG_X", "1")
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "0")
    monkeypatch.setenv("GEMMREG_API_TOKEN", "hunter2")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter3")
    first = environment.manifest([])
    switches = first["switches"]
    assert switches["GEMMREG_X"] == "1"
    assert switches["TRITON_ALWAYS_COMPILE"] == "1"
    assert switches["NVIDIA_TF32_OVERRIDE"] == "0"
    assert switches["TRITON_INTERPRET"] == "1"  # this machine has no GPU: the interpreter runs
    assert switches["GEMMREG_API_TOKEN"] == environment.WITHHELD
    assert "AWS_SECRET_ACCESS_KEY" not in switches and "HOME" not in switches
    assert "hunter2" not in json.dumps(first) and "hunter3" not in json.dumps(first)
    monkeypatch.setenv("GEMMREG_X", "2")
    assert environment.manifest([])["switches"]["GEMMREG_X"] == "2"


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--strict"],
        ["check", "fake_counted", "--strict", "--dtype", "fp32", "--sanitize", "smempoison"],
        ["compare", "fake_counted", "fake_good"],
    ],
)
def test_a_command_asks_a_plugin_whether_it_can_run_once(fake_plugins, monkeypatch, capsys, argv):
    """The list, the check's plan, its sanitizer pass, --strict and the timing
    preflight each need the answer; the plugin is asked once."""
    from fake_plugins import counted

    fake_plugins("counted", "good")
    monkeypatch.setenv("GEMMREG_PLUGINS", "none")
    counted.ASKED.clear()
    outcome = run_main(argv, capsys)
    assert outcome.code in (1, 2)  # nothing can run: the command says so
    assert "never available" in outcome.out + outcome.err
    assert len(counted.ASKED) == 1


def test_storage_imports_no_presentation_module():
    """Saved runs and checks are read and written without a renderer, a plot
    or the command line: presentation depends on storage, not back."""
    code = (
        "import sys, gemmreg.reporting.runs, gemmreg.reporting.check_files, gemmreg.reporting.run_schema\n"
        "print(sorted(m for m in sys.modules if m.startswith("
        "('gemmreg.reporting.render', 'gemmreg.reporting.plots', 'gemmreg.cli'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
