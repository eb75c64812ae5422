"""``report``'s options that the runs given leave unread are refused in one
line, exit 2, before any run is read: ``--threshold`` with nothing to
compare, ``--baseline`` and ``--peaks`` with no picture (or verdicts) that
reads them. In-process, with every way of starting work made to fail the
test."""

from __future__ import annotations

import pytest
from offline_cli import forbid_work, run_main


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("x", "--threshold", "3"), "report --threshold compares runs"),
        (("x", "y", "--parts", "--threshold", "3"), "parts joined into one run has nothing"),
        (("x", "--baseline", "torch_ref"), "report --baseline is the speedup picture's"),
        (("x", "y", "z", "--baseline", "torch_ref", "--plot", "p"), "report --baseline is"),
    ],
)
def test_report_refuses_an_option_its_runs_give_nothing_to(
    args, message, tmp_path, monkeypatch, capsys
):
    forbid_work(monkeypatch)
    monkeypatch.chdir(tmp_path)
    for name in ("x", "y", "z"):
        (tmp_path / name).mkdir()
    outcome = run_main(["report", *args], capsys)
    outcome.assert_refused()
    assert message in outcome.err


def test_report_peaks_is_refused_without_a_plot_or_a_margin(tmp_path, monkeypatch, capsys):
    forbid_work(monkeypatch)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x").mkdir()
    peaks = tmp_path / "peaks.json"
    peaks.write_text('{"devices": {"H200 SXM": {"bf16": 900}}}')
    outcome = run_main(["report", "x", "--peaks", str(peaks)], capsys)
    outcome.assert_refused()
    assert "report --peaks is read by --plot's roofline" in outcome.err
    outcome = run_main(["report", "x", "--peaks", str(peaks), "--margin", "2"], capsys)
    outcome.assert_refused()  # past the option, at the run: an empty folder
    assert "--peaks" not in outcome.err and "x" in outcome.err
