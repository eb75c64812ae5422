"""Legends and help texts quote the constants that set the rules they state:
change a constant and the text follows (none restates a figure of its own)."""

from __future__ import annotations

import pytest
from gemmreg import cli, testing
from gemmreg.checking import matrix, sanitizer_tools
from gemmreg.contract import inputs
from gemmreg.contract.records import Problem
from gemmreg.reporting import regression, render_compare
from gemmreg.timing import regime_graph, rounds, stats, timing_options
from gemmreg.timing.timing_records import CompareReport


def one_line(text: str) -> str:
    """Text as one line: argparse and the legends wrap where they like."""
    return " ".join(text.split())


def legend(margin: float | None = None) -> str:
    report = CompareReport(
        problem=Problem(m=8, n=8, k=8),
        processes=3,
        seed=1,
        clock="test",
        device_name="test device",
        summaries=(),
        verdicts=(),
        runs=(),
        margin=margin,
    )
    return one_line(render_compare.compare_table(report, "table"))


def test_the_compare_legend_states_the_rules_in_force_today():
    text = legend()
    assert "(not taken when a call lasts over 2 ms: launch cost is noise there)" in text
    assert "launch-bound: a median under 0.05 ms whose graph ms is under 50% of it" in text
    assert "rounds until every pair is known to +-0.5% (capped)" in text
    assert "EQUIVALENT when inside +-1.0%" in text
    assert "two one-sided tests' narrower interval" in text


def test_the_compare_legend_follows_its_constants(monkeypatch):
    monkeypatch.setattr(regime_graph, "GRAPH_MAX_CALL_MS", 7.5)
    monkeypatch.setattr(regime_graph, "LAUNCH_BOUND_MAX_MS", 0.2)
    monkeypatch.setattr(regime_graph, "LAUNCH_BOUND_RATIO", 0.25)
    monkeypatch.setattr(rounds, "TARGET_HALFWIDTH", 0.02)
    monkeypatch.setattr(stats, "DEFAULT_MARGIN", 0.03)
    text = legend()
    assert "when a call lasts over 7.5 ms" in text
    assert "launch-bound: a median under 0.2 ms whose graph ms is under 25% of it" in text
    assert "known to +-2.0% (capped)" in text
    assert "EQUIVALENT when inside +-3.0%" in text
    assert "EQUIVALENT when inside +-4.0%" in legend(margin=0.04)  # the run's own margin first


def command_help(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args([command, "--help"])
    return one_line(capsys.readouterr().out)


def test_the_timing_help_quotes_the_defaults_that_run(monkeypatch, capsys):
    text = command_help("compare", capsys)
    assert "3 on the CPU; 5 with compare --ray)" in text
    assert (
        "(default on a GPU: 120 for compare, 40 a point for bench; on the CPU, none: a fixed 3)"
        in text
    )
    assert "(default: 512x512x512 on a GPU, 128x128x128 on the CPU)" in text
    assert "(default: >= 10 calls, >= 0.25 s and a steady SM clock on a GPU)" in text
    assert "(default: 3 on a GPU; bench: 1)" in text
    assert "known to +-0.5%, capped" in text
    assert "(above 0 up to 50; default 1)" in text

    monkeypatch.setattr(timing_options, "GPU_DEFAULT_PROCESSES", 7)
    monkeypatch.setattr(timing_options, "GPU_DEFAULT_BUDGET_S", 25.0)
    monkeypatch.setattr(timing_options, "GPU_COMPARE_BUDGET_S", 75.0)
    monkeypatch.setattr(timing_options, "CPU_DEFAULT_SHAPE", (64, 32, 16))
    slow = timing_options.attrs.evolve(timing_options.GPU_POLICY, soak_min_calls=12)
    monkeypatch.setattr(timing_options, "GPU_POLICY", slow)
    monkeypatch.setattr(timing_options, "BENCH_MAX_TIME_S", 0.5)
    monkeypatch.setattr(rounds, "TARGET_HALFWIDTH", 0.01)
    monkeypatch.setattr(stats, "DEFAULT_MARGIN", 0.02)
    text = command_help("compare", capsys)
    assert (
        "3 on the CPU; 7 with compare --ray)" in text and "GPU: 75 for compare, 25 a point" in text
    )
    assert "128x128x128" not in text and "64x32x16 on the CPU" in text
    assert ">= 12 calls" in text and "bench: 0.5)" in text
    assert "known to +-1.0%, capped" in text and "default 2)" in text


def test_the_report_help_quotes_the_regression_threshold(monkeypatch, capsys):
    assert "(default 5)" in command_help("report", capsys)
    monkeypatch.setattr(regression, "DEFAULT_THRESHOLD_PCT", 2.5)
    assert "(default 2.5)" in command_help("report", capsys)


class _Group:
    """What ``pytest_addoption`` is handed, keeping each option's help."""

    def __init__(self) -> None:
        self.help: dict[str, str] = {}

    def getgroup(self, name: str) -> _Group:
        return self

    def addoption(self, name: str, **kwargs: object) -> None:
        self.help[name] = one_line(str(kwargs.get("help", "")))


def pytest_sanitize_help() -> str:
    group = _Group()
    testing.pytest_addoption(group)
    return group.help["--gemmreg-sanitize"]


def test_the_sanitize_helps_name_the_default_tools(monkeypatch, capsys):
    assert sanitizer_tools.DEFAULT_TOOLS == sanitizer_tools.TOOLS
    assert "(all of them by default)" in pytest_sanitize_help()
    assert "(all of them by default;" in command_help("check", capsys)

    monkeypatch.setattr(sanitizer_tools, "DEFAULT_TOOLS", ("memcheck", "racecheck"))
    expected = "memcheck and racecheck by default; synccheck, initcheck and smempoison on request"
    assert expected in pytest_sanitize_help()
    assert expected in command_help("check", capsys)
    assert sanitizer_tools.parse_tools(None) == ("memcheck", "racecheck")  # and it is what runs


def test_one_default_seed_for_the_matrix_and_the_timing_runs(monkeypatch):
    assert matrix.Case(problem=Problem(m=1, n=1, k=1)).seed == inputs.DEFAULT_SEED
    assert timing_options.timing_options(gpu=False).seed == inputs.DEFAULT_SEED
    monkeypatch.setattr(inputs, "DEFAULT_SEED", 11)
    assert timing_options.timing_options(gpu=False).seed == 11
