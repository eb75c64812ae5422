"""The peaks table's devices, the user's own peaks (GEMMREG_PEAKS, report
--peaks) and the speedup-versus-baseline picture of report --plot."""

from __future__ import annotations

import json
import warnings

import attrs
import pytest
from gemmreg.contract.records import Problem
from gemmreg.reporting import runs
from gemmreg.timing import peaks, peaks_file
from gemmreg.timing.timing_records import CompareReport, Verdict
from offline_cli import forbid_work, run_main
from test_plots import point

TOML = """
[devices."H200 SXM"]
memory_tb_s = 4.1
source = "measured, our H200"

[devices."My accelerator"]
pattern = "MyAccel"
memory_tb_s = 1.0
fp32 = 20.0
fp16 = 80.0
bf16 = 80.0
"""


@pytest.fixture
def user_peaks(monkeypatch, tmp_path):
    """Point GEMMREG_PEAKS at a file written here (undone after the test)."""

    def use(text: str, suffix: str = ".toml"):
        path = tmp_path / f"peaks{suffix}"
        path.write_text(text)
        monkeypatch.setenv(peaks_file.PEAKS_ENV, str(path))
        return path

    monkeypatch.setenv(peaks_file.PEAKS_ENV, "")  # restored afterwards, even to unset
    monkeypatch.delenv(peaks_file.PEAKS_ENV)
    return use


@pytest.mark.parametrize(
    ("torch_name", "entry"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H200", "H200 SXM"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
        ("NVIDIA L40S", "L40S"),
        ("AMD Instinct MI300X", "MI300X"),
        ("AMD Instinct MI325X", "MI325X"),
        ("AMD Radeon RX 9070 XT", "RX 9070 XT"),
    ],
)
def test_every_device_the_issue_names_has_datasheet_peaks(torch_name, entry):
    found = peaks.device_peaks(torch_name)
    assert found is not None and found.name == entry
    assert found.source and found.memory_tb_s > 0 and found.bf16 > found.fp32


def test_lookalike_names_get_no_one_elses_peaks():
    assert peaks.device_peaks("NVIDIA GB200") is None  # a different part from the B200
    assert peaks.device_peaks("AMD Radeon RX 9070") is None  # not the XT
    assert peaks.peak_tflops("AMD Radeon RX 9070 XT", "tf32") is None  # RDNA 4: no TF32


def test_the_users_entries_come_first_and_inherit_what_they_do_not_say(user_peaks):
    path = user_peaks(TOML)
    h200 = peaks.device_peaks("NVIDIA H200")
    assert h200.memory_tb_s == 4.1 and h200.source == "measured, our H200"
    assert h200.fp32 == 66.9  # the datasheet's, not restated
    mine = peaks.device_peaks("MyAccel v2")
    assert mine.fp16 == 80.0 and mine.tf32 is None and str(path) in mine.source
    assert peaks.device_peaks("NVIDIA H100 PCIe").name == "H100 PCIe"  # the table still answers
    user_peaks(json.dumps({"devices": {"H200 SXM": {"bf16": 900}}}), ".json")
    assert peaks.peak_tflops("NVIDIA H200", "bf16") == 900.0


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{", "peaks file"),
        ('{"devices": {}}', 'a non-empty "devices" table'),
        ('{"devices": {"H200 SXM": {"fp32": -1}}}', "fp32 must be a positive number"),
        ('{"devices": {"H200 SXM": {"fp23": 1}}}', "unknown field 'fp23'"),
        ('{"devices": {"New": {"fp32": 1}}}', "needs memory_tb_s, fp32, fp16, bf16"),
        ('{"devices": {"H200 SXM": {"pattern": "("}}}', "pattern '('"),
    ],
)
def test_a_broken_peaks_file_is_refused_before_any_work(
    text, said, user_peaks, monkeypatch, capsys
):
    forbid_work(monkeypatch)
    user_peaks(text, ".json")
    outcome = run_main(["compare", "torch_ref", "triton_grouped"], capsys)
    outcome.assert_refused()
    assert said in outcome.err


def test_report_peaks_names_the_file(user_peaks, tmp_path, monkeypatch, capsys):
    forbid_work(monkeypatch)
    runs.write_run(tmp_path / "run", {"device_name": "NVIDIA H200"}, [point(64, 1.0)], False)
    outcome = run_main(["report", str(tmp_path / "run"), "--peaks", str(tmp_path / "no")], capsys)
    outcome.assert_refused()
    assert "GEMMREG_PEAKS=" in outcome.err and "No such file" in outcome.err


def verdict_report(n: int, speedup: float, interval: tuple[float, float]) -> CompareReport:
    judged = Verdict(
        baseline="base",
        kernel="fast",
        verdict="faster",
        speedup=speedup,
        interval=interval,
        explanation="",
    )
    (timed,) = point(n, 1.0).summaries  # a saved run's verdicts name kernels it timed
    return CompareReport(
        problem=Problem(m=n, n=n, k=n),
        processes=3,
        seed=1,
        clock="test",
        device_name="NVIDIA H200",
        summaries=(attrs.evolve(timed, kernel="base"), attrs.evolve(timed, kernel="fast")),
        verdicts=(judged,),
        runs=(),
    )


SWEEP = [verdict_report(n, s, (s - 0.1, s + 0.1)) for n, s in ((64, 1.2), (128, 1.5), (256, 2.0))]


def test_the_speedup_picture_has_each_points_interval_and_the_line_at_one():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from gemmreg.reporting import plots_speedup

    assert plots_speedup.default_baseline(SWEEP) == "base"
    untimed = Verdict(
        baseline="skipped",
        kernel="fast",
        verdict="no verdict",
        speedup=None,
        interval=None,
        explanation="skipped",
    )
    unjudged = [attrs.evolve(r, verdicts=(untimed, untimed)) for r in SWEEP[:2]]
    assert plots_speedup.default_baseline(unjudged + SWEEP) == "base"  # a figure, not a name
    fig = plots_speedup.figure(plt, "fp32", SWEEP, "base")
    axes = fig.axes[0]
    lines = {line.get_label(): line for line in axes.get_lines()}
    assert list(lines["base (1.0)"].get_ydata()) == [1.0, 1.0]
    (bars,) = axes.containers
    assert list(bars.lines[0].get_ydata()) == [1.2, 1.5, 2.0]
    tops = [seg[1][1] for seg in bars.lines[2][0].get_segments()]
    assert tops == pytest.approx([1.3, 1.6, 2.1])
    turned = plots_speedup.figure(plt, "fp32", SWEEP, "fast")  # the pair turned over
    (bars,) = turned.axes[0].containers
    assert list(bars.lines[0].get_ydata()) == pytest.approx([1 / 1.2, 1 / 1.5, 1 / 2.0])
    lows = [seg[0][1] for seg in bars.lines[2][0].get_segments()]
    assert lows == pytest.approx([1 / 1.3, 1 / 1.6, 1 / 2.1])


def test_each_form_of_point_is_its_own_series_and_shared_sizes_are_not_joined():
    """A row-major and a transposed point of one size used to be one line
    zigzagging between them; a model's shapes of one size (1x14336x4096 and
    1x4096x14336) were joined by a line that drew a trend not there."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from gemmreg.reporting import plots_speedup

    transposed = [
        attrs.evolve(r, problem=attrs.evolve(r.problem, layout="transposedB"))
        for r in verdict_report_series(((64, 0.8), (128, 0.9), (256, 1.1)))
    ]
    fig = plots_speedup.figure(plt, "fp32", SWEEP + transposed, "base")
    bars = {c.get_label(): c for c in fig.axes[0].containers}
    rowmajor, transposed_b = "fast (ieee_fp32) fp32-rowmajor", "fast (ieee_fp32) fp32-transposedB"
    assert set(bars) == {rowmajor, transposed_b}
    assert list(bars[transposed_b].lines[0].get_ydata()) == [0.8, 0.9, 1.1]
    assert bars[rowmajor].lines[0].get_linestyle() == "-"
    wide, deep = (
        attrs.evolve(verdict_report(1, s, (s - 0.1, s + 0.1)), problem=Problem(m=1, n=n, k=k))
        for s, n, k in ((1.2, 14336, 4096), (0.7, 4096, 14336))
    )
    model = plots_speedup.figure(plt, "fp32", [wide, deep], "base")
    (shared,) = model.axes[0].containers
    assert sorted(shared.lines[0].get_ydata()) == [0.7, 1.2]
    assert shared.lines[0].get_linestyle() == "None"


def verdict_report_series(points):
    return [verdict_report(n, s, (s - 0.1, s + 0.1)) for n, s in points]


def test_report_plot_writes_the_speedup_picture_and_refuses_an_unknown_baseline(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    runs.write_run(tmp_path / "run", {"device_name": "NVIDIA H200"}, SWEEP, False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = run_main(["report", str(tmp_path / "run"), "--plot", str(tmp_path / "p")], capsys)
    assert done.code == 0, done.err
    # a panel with nothing labelled says so instead of asking for an empty legend
    assert not [w for w in caught if "No artists with labels" in str(w.message)]
    names = {p.name for p in (tmp_path / "p").iterdir()}
    assert {"speedup-fp32.png", "speedup-fp32.svg", "sweep-fp32.png"} <= names
    refused = run_main(
        ["report", str(tmp_path / "run"), "--plot", str(tmp_path / "q"), "--baseline", "nope"],
        capsys,
    )
    refused.assert_refused()
    assert "no verdict of this run names it" in refused.err
