"""What ``gemmreg check`` prints: by default a row per plugin, kind and dtype
for the passing cases (with the worst error beside its tolerance) and a row
for every case that did not pass; ``-v`` prints every case. The saved tables
keep every case either way, and in a log the passing cases give a progress
line now and then instead of one line each."""

from __future__ import annotations

import pytest
from conftest import run_gemmreg


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        import os

        from conftest import TESTS

        mp.setenv(
            "PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
        )
        mp.setenv("GEMMREG_EXTRA_PLUGINS", "fake_plugins.good,fake_plugins.misbehaving")
        mp.setenv("FAKE_KERNELS", "fake_skips_column")
        out = tmp_path_factory.mktemp("check")
        args = (
            "check",
            "fake_good",
            "fake_skips_column",
            "--dtype",
            "fp32",
            "--layout",
            "rowmajor",
        )
        short = run_gemmreg(*args, "--out", str(out / "short"))
        verbose = run_gemmreg(*args, "-v")
    return short, verbose, out / "short"


def _rows(text: str, plugin: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(plugin + " ")]


def test_passing_cases_are_one_row_and_failures_each_their_own(checked):
    short, _, _ = checked
    assert short.returncode == 1, short.stderr[-2000:]  # the failures still fail the check
    (good,) = [r for r in _rows(short.stdout, "fake_good") if " pass " in r]
    assert "fp32 cases" in good and "(tol " in good and "worst: fp32-rowmajor-" in good
    failures = [r for r in _rows(short.stdout, "fake_skips_column") if " FAIL " in r]
    assert len(failures) > 1  # every failing case by name
    assert all("-rowmajor-" in r.split()[1] for r in failures)


def test_in_a_log_only_failures_get_a_line_of_their_own(checked):
    short, _, _ = checked
    case_lines = [line for line in short.stderr.splitlines() if line.startswith("  fake_")]
    assert case_lines and all(": fail" in line for line in case_lines), case_lines[:5]
    (count,) = [line for line in short.stdout.splitlines() if " pass, " in line]
    assert len(case_lines) == int(count.split(" pass, ")[1].split()[0])  # one per failure


def test_verbose_prints_every_case_and_the_saved_table_always_does(checked):
    short, verbose, saved = checked
    passing = [r for r in _rows(verbose.stdout, "fake_good") if " pass " in r]
    assert len(passing) > 1 and all("fp32-rowmajor-" in r.split()[1] for r in passing)
    assert any(": pass" in line for line in verbose.stderr.splitlines())
    table = (saved / "check.txt").read_text()
    assert len([r for r in _rows(table, "fake_good") if " pass " in r]) == len(passing)
    counts = [line for line in short.stdout.splitlines() if " pass, " in line]
    assert counts == [line for line in verbose.stdout.splitlines() if " pass, " in line]
