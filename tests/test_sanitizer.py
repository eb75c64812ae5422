"""The sanitizer pass on the CPU: tool names, skip reasons, the command line
(the end-to-end ``check --sanitize`` is test_end_to_end.py's), and the whole
pass end to end through a stand-in for compute-sanitizer (tests/fake_sanitizer/)
that writes a recorded log and then execs the real worker, so grouping,
bisect-on-failure, attribution and the JSON are real."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gemmreg.checking import matrix, sanitized_runs, sanitizer_pass, sanitizer_tools
from gemmreg.discovery.registry import discover
from gemmreg.reporting import render
from offline_cli import forbid_work, run_main

TESTS = Path(__file__).parent
FAKE = TESTS / "fake_sanitizer" / "compute-sanitizer"
FIXTURES = TESTS / "fixtures" / "sanitizer"


def test_tool_names():
    assert sanitizer_tools.parse_tools(None) == sanitizer_tools.DEFAULT_TOOLS
    assert sanitizer_tools.parse_tools("all") == sanitizer_tools.DEFAULT_TOOLS
    assert sanitizer_tools.parse_tools("racecheck, memcheck,racecheck") == ("racecheck", "memcheck")
    assert sanitizer_tools.parse_tools("smempoison") == ("smempoison",)
    assert (
        sanitizer_tools.DEFAULT_TOOLS == sanitizer_tools.TOOLS
    )  # smempoison included: seen on the H200
    with pytest.raises(
        sanitizer_tools.UnknownToolError, match="unknown sanitizer tool 'hip_tiled'"
    ):
        sanitizer_tools.parse_tools("hip_tiled")


def test_skip_reasons(monkeypatch, tmp_path):
    for tool in sanitizer_tools.TOOLS:
        assert sanitizer_tools.unavailable_reason(tool, "cpu") == sanitizer_tools.CPU_REASON
    assert "compute-sanitizer is NVIDIA-only" in sanitizer_tools.unavailable_reason(
        "memcheck", "rocm"
    )
    assert sanitizer_tools.unavailable_reason("smempoison", "rocm") is None
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(sanitizer_tools, "FALLBACK_ROOTS", (str(tmp_path),))
    assert sanitizer_tools.locate() is None
    assert "compute-sanitizer not found" in sanitizer_tools.unavailable_reason("racecheck", "cuda")
    assert sanitizer_tools.unavailable_reason("smempoison", "cuda") is None
    monkeypatch.setenv("CUDA_HOME", str(FAKE.parent.parent))  # no bin/ there
    assert sanitizer_tools.locate() is None
    monkeypatch.setenv("PATH", str(FAKE.parent))
    assert sanitizer_tools.locate() == FAKE
    assert sanitizer_tools.unavailable_reason("racecheck", "cuda") is None


def test_the_command_and_the_environment():
    command = sanitizer_tools.command("cs", "racecheck", Path("/tmp/x.log"))
    assert command[:5] == ["cs", "--tool", "racecheck", "--log-file", "/tmp/x.log"]
    assert "application-only" in command
    env = sanitizer_tools.worker_env("racecheck", {"A": "1"})
    # The caching allocator is off, and plugins are told, so they can skip
    # speed-only work (autotuning) there.
    assert env == {
        "A": "1",
        "PYTORCH_NO_CUDA_MEMORY_CACHING": "1",
        sanitizer_tools.SANITIZING_ENV: "racecheck",
    }
    # smempoison runs no sanitizer process: the allocator stays as usual.
    assert sanitizer_tools.worker_env(sanitizer_tools.SMEM_POISON, {}) == {
        sanitizer_tools.SANITIZING_ENV: "smempoison"
    }


def test_the_subset_is_small_and_has_every_tail_and_layout():
    cases = matrix.sanitize_cases()
    shapes = {c.problem.shape for c in cases}
    assert shapes == {"65x67x69", "65x67x7", "256x256x256"}
    tails = [c for c in cases if c.problem.shape == "65x67x69"]
    assert {c.problem.layout for c in tails} == {"rowmajor", "transposedA", "transposedB", "padded"}
    assert len(cases) == 3 * 4 + 3 * 2
    assert [c.problem.layout for c in matrix.sanitize_cases(["fp32"], ["padded"])] == ["padded"]


@pytest.mark.parametrize("value", ["bogus", "racecheck,bogus", "torch_ref"])
def test_cli_rejects_an_unknown_tool_in_one_line(value, monkeypatch, capsys):
    forbid_work(monkeypatch)  # in-process: refused before any work, in one line
    outcome = run_main(["check", "--sanitize", value], capsys)
    outcome.assert_refused()
    assert "unknown sanitizer tool" in outcome.err and "--sanitize=TOOLS" in outcome.err


def test_pytest_plugin_option_skips_on_the_cpu(tmp_path):
    import subprocess
    import sys

    test = tmp_path / "test_mine.py"
    test.write_text('from gemmreg.testing import matrix\n\ntest_it = matrix("torch_ref")\n')
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", str(test), "-q", "-rs", "-p", "no:cacheprovider"),
            *("--gemmreg-sanitize=racecheck,smempoison", "-k", "racecheck or smempoison"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "GEMMREG_PLUGINS": "torch_ref"},
    )
    assert "36 skipped" in done.stdout, done.stdout + done.stderr  # 18 cases x 2 tools
    assert "sanitizer pass skipped: the CPU backend" in done.stdout


@pytest.fixture
def fake_env(monkeypatch, tmp_path):
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("GEMMREG_PLUGINS", "torch_ref")
    monkeypatch.setenv("GEMMREG_FAKE_SANITIZER_CALLS", str(calls))
    monkeypatch.setenv("GEMMREG_FAKE_SANITIZER_LOG", str(FIXTURES / "racecheck.txt"))
    return calls


def run_fake(tool="racecheck", log_dir=None):
    kernels = discover().select(["torch_ref"])
    cases = matrix.sanitize_cases(["fp32"], ["rowmajor"])
    results = []
    sanitized_runs.run_tool("torch_ref", cases, tool, FAKE, log_dir, results.append)
    return kernels, {r.problem.shape: r for r in results}


@pytest.mark.slow
def test_a_clean_shared_process_clears_every_case(fake_env, monkeypatch, tmp_path):
    monkeypatch.delenv("GEMMREG_FAKE_SANITIZER_BAD", raising=False)
    _, results = run_fake(log_dir=tmp_path / "logs")
    assert fake_env.read_text().splitlines() == ["racecheck 65x67x69 65x67x7 256x256x256"]
    for result in results.values():
        assert result.status == "pass" and result.kind == "sanitize"
        assert result.sanitizer.attribution == "group"
        assert result.sanitizer.raw_log == str(tmp_path / "logs" / "torch_ref-racecheck.log")
        assert result.id.endswith("-racecheck")


@pytest.mark.slow
def test_findings_are_bisected_to_the_case_that_made_them(fake_env, monkeypatch, tmp_path):
    monkeypatch.setenv("GEMMREG_FAKE_SANITIZER_BAD", "65x67x69")
    _, results = run_fake(log_dir=tmp_path / "logs")
    # One shared process, then each of its cases alone.
    assert fake_env.read_text().splitlines() == [
        "racecheck 65x67x69 65x67x7 256x256x256",
        "racecheck 65x67x69",
        "racecheck 65x67x7",
        "racecheck 256x256x256",
    ]
    bad = results["65x67x69"]
    assert bad.status == "fail" and bad.sanitizer.attribution == "case"
    assert bad.comparison["passed"]  # right values, failed on the sanitizer alone
    assert "no_second_barrier" in bad.reason
    assert Path(bad.sanitizer.raw_log).name == "torch_ref-fp32-rowmajor-65x67x69-racecheck.log"
    for shape in ("65x67x7", "256x256x256"):
        assert results[shape].status == "pass"
        assert results[shape].sanitizer.attribution == "case"

    table = render.check_table(list(results.values()), "table")
    assert "sanitizer" in table and "raw: " in table
    data = json.loads(render.check_table(list(results.values()), "json"))
    failing = next(c for c in data["cases"] if c["status"] == "fail")
    findings = failing["sanitizer"]["report"]["findings"]
    assert {(f["severity"], f["kernel"], f["count"]) for f in findings} == {
        ("error", "no_second_barrier", 46848),
        ("warning", "no_second_barrier", 38400),
    }
    assert failing["sanitizer"]["raw_log"].endswith(".log")
    assert data["counts"]["fail"] == 1

    # The summary: one row for the tool, the finding named, one case of three.
    (row,) = render.sanitize_summary(list(results.values()), "table").splitlines()[2:]
    assert row.split()[:5] == ["torch_ref", "racecheck", "3", "2", "1"]
    assert "in no_second_barrier (1 case)" in row


@pytest.mark.slow
def test_run_pass_skips_with_the_reason_on_the_cpu(fake_env, tmp_path):
    kernels = discover().select(["torch_ref"])
    cases = matrix.sanitize_cases(["fp32"], ["rowmajor"])
    results = sanitizer_pass.run_pass(kernels, cases, sanitizer_tools.TOOLS, "cpu", tmp_path)
    assert len(results) == 3 * len(sanitizer_tools.TOOLS)
    assert {r.status for r in results} == {"skip"}
    assert {r.reason for r in results} == {f"sanitizer pass skipped: {sanitizer_tools.CPU_REASON}"}
    assert not fake_env.exists()
