"""``--fail-on``: a comparison's verdicts as an exit code for CI, and the
same verdicts for a Python caller (``Run.failing``). Judged on a real saved
run (the H200's bench of triton_tuned against cuBLAS at 12 LLM points: 10
FASTER, 2 SLOWER) and through the command line with the comparison itself
replaced by that run's points, so no kernel runs here."""

from __future__ import annotations

from pathlib import Path

import gemmreg
import pytest
from gemmreg.commands import compare_command, gates
from gemmreg.commands.results import CompareResult
from offline_cli import forbid_work, run_main

REPO = Path(__file__).resolve().parents[1]
SAVED = REPO / "evidence/2026-12-04-h200-tma-split-k-llm-decode/bf16-1-16-128/bench"
SLOWER = {"128x1024x4096", "128x14336x4096"}


@pytest.fixture(scope="module")
def run() -> gemmreg.Run:
    return gemmreg.load_run(SAVED)


def test_each_condition_names_the_verdicts_it_fails(run):
    words = [v.verdict for v in run.verdicts]
    assert words.count("faster") == 10 and words.count("slower") == 2  # the run as saved
    assert {r.problem.shape for r, _ in gates.failing(run.reports, ["slower"])} == SLOWER
    assert len(run.failing("slower")) == 2
    assert len(run.failing("not-faster")) == 2  # nothing here is EQUIVALENT or INCONCLUSIVE
    assert run.failing("invalid") == ()
    assert run.failing("invalid", "slower") == run.failing("slower")


def test_the_gate_line_names_each_failing_pair_once(run):
    line = gates.gate_line(run.reports, ["slower"])
    assert line.startswith("--fail-on slower: 2 pairs: ")
    assert line.count("triton_tuned vs torch_ref") == 2 and "SLOWER 0.9925x" in line
    assert gates.gate_line(run.reports, ["invalid"]) == ""


@pytest.fixture
def cli_on_saved_points(monkeypatch, capsys, tmp_path, run):
    """``compare``'s command line with the comparison replaced by one saved
    point (chosen by shape), and nothing else allowed to start work."""
    monkeypatch.chdir(tmp_path)
    forbid_work(monkeypatch)

    def main(shape: str, *options: str):
        report = next(r for r in run.reports if r.problem.shape == shape)
        monkeypatch.setattr(
            compare_command, "compare", lambda *a, **k: CompareResult(reports=(report,))
        )
        monkeypatch.setattr(compare_command, "save", lambda *a, **k: None)
        return run_main(["compare", "torch_ref", "triton_tuned", *options], capsys)

    return main


def test_a_failed_gate_is_exit_1_with_one_line(cli_on_saved_points):
    outcome = cli_on_saved_points("128x14336x4096", "--fail-on", "slower")
    assert outcome.code == 1
    gate = [line for line in outcome.err.splitlines() if "--fail-on" in line]
    assert gate == [
        "gemmreg: --fail-on slower: 1 pair: triton_tuned vs torch_ref at "
        "bf16-transposedB-128x14336x4096: SLOWER 0.9153x"
    ]


@pytest.mark.parametrize(
    "shape, options, code",
    [
        ("128x4096x4096", ["--fail-on", "slower"], 0),  # FASTER passes
        ("128x4096x4096", ["--fail-on", "not-faster"], 0),
        ("128x14336x4096", [], 0),  # no gate: a SLOWER verdict is an answer, not a failure
        ("128x14336x4096", ["--fail-on", "not-faster"], 1),
        ("128x14336x4096", ["--fail-on", "invalid"], 0),
    ],
)
def test_the_exit_code_follows_the_gate(cli_on_saved_points, shape, options, code):
    outcome = cli_on_saved_points(shape, *options)
    assert outcome.code == code, outcome.err
    assert ("--fail-on" in outcome.err) == (code == 1)


def test_an_unknown_condition_is_bad_input(cli_offline):
    outcome = cli_offline("bench", "torch_ref", "--shape", "64", "--fail-on", "slowr")
    outcome.assert_refused()
    assert "did you mean 'slower'?" in outcome.err
