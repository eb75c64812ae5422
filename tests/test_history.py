"""``report RUN1 RUN2 RUN3 ...``: a trend per device model, problem and
kernel, ordered by the runs' time, each step judged by report BEFORE AFTER's
rule; on runs built here and on real H200 runs kept in evidence/."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import attrs
import pytest
from gemmreg.contract.records import Problem
from gemmreg.reporting import history, runs
from offline_cli import run_main
from test_runs import report

EVIDENCE = Path(__file__).parent.parent / "evidence" / "2026-11-30-h200-verdict-evidence"
STEADY, SLOWER = [1.0, 1.01, 0.99], [1.5, 1.51, 1.49]


def save(folder: Path, medians, commit: str, hour: int, device: str = "NVIDIA H200") -> Path:
    manifest = {
        "backend": "cuda",
        "device_name": device,
        "git": {"commit": commit},
        "timestamp_utc": f"2026-11-30T{hour:02d}:00:00+00:00",
    }
    saved = attrs.evolve(report(medians), device_name=device)  # as a real run records it
    runs.write_run(folder, manifest, [saved], partial=False)
    return folder


@pytest.fixture
def saved(tmp_path):
    """Four H200 runs (the third a slowdown, the fourth its fix), one H100 run."""
    return {
        "a": save(tmp_path / "a", STEADY, "aaaaaaaaaaaa1", 1),
        "b": save(tmp_path / "b", STEADY, "bbbbbbbbbbbb2", 2),
        "c": save(tmp_path / "c", SLOWER, "cccccccccccc3", 3),
        "d": save(tmp_path / "d", STEADY, "dddddddddddd4", 4),
        "h100": save(tmp_path / "h100", SLOWER, "eeeeeeeeeeee5", 5, "NVIDIA H100 80GB HBM3"),
    }


def loaded(*paths: Path) -> list[history.RunInfo]:
    return [history.run_info(str(p), *runs.load_run(p)) for p in paths]


def test_steps_are_ordered_by_time_and_judged_as_report_before_after(saved):
    given = loaded(saved["d"], saved["b"], saved["h100"], saved["a"], saved["c"])
    h200, h100 = sorted(history.trends(given, 5.0), key=lambda t: t.device != "NVIDIA H200")
    assert [p.commit for p in h200.points] == [
        "aaaaaaaaaaaa1",
        "bbbbbbbbbbbb2",
        "cccccccccccc3",
        "dddddddddddd4",
    ]
    first, same, slower, fixed = h200.points
    assert first.change is None
    assert same.change.verdict == "equivalent" and not same.change.regression
    assert slower.change.verdict == "slower" and slower.change.regression
    assert fixed.change.verdict == "faster"
    # The H100 run is never judged against the H200's: a trend of its own.
    assert h100.device == "NVIDIA H100 80GB HBM3" and len(h100.points) == 1
    assert h100.points[0].change is None
    assert history.latest_regressions([h200, h100]) == []  # the slowdown was undone


def test_report_over_many_runs_exits_1_on_a_regression_in_the_newest(saved, capsys):
    names = [str(saved[k]) for k in ("c", "a", "b", "h100")]
    outcome = run_main(["report", *names], capsys)
    assert outcome.code == 1, outcome.err
    assert "device: NVIDIA H200" in outcome.out
    assert "device: NVIDIA H100 80GB HBM3" in outcome.out
    assert "SLOWER REGRESSION" in outcome.out
    assert "cccccccccc" in outcome.out  # keyed by commit
    fixed = run_main(["report", *names, str(saved["d"])], capsys)
    assert fixed.code == 0, fixed.err
    assert "SLOWER REGRESSION" in fixed.out  # still shown: history, not failed on
    rows = run_main(["report", *names, "--format", "csv"], capsys).out.splitlines()
    assert rows[0].startswith("device,problem,plugin,run,commit,timestamp_utc,median_ms")
    assert len(rows) == 1 + 4


def test_options_of_one_run_are_refused_on_a_history(saved, capsys):
    names = [str(saved[k]) for k in ("a", "b", "c")]
    run_main(["report", *names, "--margin", "1"], capsys).assert_refused()
    run_main(["report", *names, "--verdicts"], capsys).assert_refused()
    run_main(["report", *names, "--regimes"], capsys).assert_refused()
    run_main(["report", *names, names[0]], capsys).assert_refused()


def test_real_h200_runs_of_one_commit_show_no_regression():
    """Three known-difference benches taken minutes apart on the H200 at one
    commit: every step judged (no partial point), none a regression."""
    paths = [EVIDENCE / f"knownbench-{n}" for n in (3, 1, 2)]
    trends = history.trends(loaded(*paths), 5.0)
    assert {t.device for t in trends} == {"NVIDIA H200"}
    assert {t.kernel for t in trends} == {"torch_ref", "mm_extra_pass"}
    stamps = [p.timestamp for p in trends[0].points]
    assert stamps == sorted(stamps) and len(stamps) == 3
    steps = [p.change for t in trends for p in t.points[1:]]
    assert steps and all(c.verdict == "equivalent" for c in steps)
    assert not any(c.regression for c in steps)


def test_the_trend_is_plotted_one_file_per_device(saved, tmp_path):
    pytest.importorskip("matplotlib")
    from gemmreg.reporting import plots_history

    trends = history.trends(loaded(*saved.values()), 5.0)
    written = plots_history.write_history_plots(tmp_path / "plots", trends)
    assert {p.name for p in written} == {
        "history-nvidia-h200.png",
        "history-nvidia-h200.svg",
        "history-nvidia-h100-80gb-hbm3.png",
        "history-nvidia-h100-80gb-hbm3.svg",
    }
    svg = (tmp_path / "plots" / "history-nvidia-h200.svg").read_text()
    assert "cccccccccc" in svg and "regression" in svg


def test_a_problem_no_run_timed_gets_a_note_instead_of_an_empty_legend(tmp_path):
    """A kernel that crashed at a problem in every run leaves its panel with
    nothing labelled: the panel says so, and matplotlib is never asked for a
    legend of nothing (its 'No artists with labels' warning)."""
    pytest.importorskip("matplotlib")
    from gemmreg.reporting import plots_history

    crashed = attrs.evolve(
        report(STEADY).summaries[0],
        status="crashed",
        process_medians_ms=(),
        center_ms=None,
        low_ms=None,
        high_ms=None,
    )
    folders = []
    for hour in (1, 2):
        folders.append(save(tmp_path / f"run{hour}", STEADY, f"{hour}" * 12, hour))
        manifest, (saved,), partial = runs.load_run(folders[-1])
        failed = attrs.evolve(saved, summaries=(crashed,), problem=Problem(m=8, n=8, k=8))
        runs.write_run(folders[-1], manifest, [saved, failed], partial)
    trends = history.trends(loaded(*folders), 5.0)
    assert {len(t.points) for t in trends} == {2}  # the timed problem and the crashed one
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plots_history.write_history_plots(tmp_path / "plots", trends)
    assert not [w for w in caught if "No artists with labels" in str(w.message)]
    svg = (tmp_path / "plots" / "history-nvidia-h200.svg").read_text()
    assert "no kernel was timed at this problem" in svg


def test_the_json_keeps_every_step(saved, capsys):
    names = [str(saved[k]) for k in ("a", "b", "c")]
    data = json.loads(run_main(["report", *names, "--format", "json"], capsys).out)
    (trend,) = data["trends"]
    assert [p["change"] and p["change"]["verdict"] for p in trend["points"]] == [
        None,
        "equivalent",
        "slower",
    ]


def test_a_partial_point_is_never_the_reference_a_later_run_is_judged_against(saved, tmp_path):
    """A run cut short after one process, between a whole run and a slower
    one: the slower run is judged against the whole figures (a regression),
    not against the one-process figures, which would leave it unjudged and
    blame it for being partial."""
    manifest = {
        "backend": "cuda",
        "device_name": "NVIDIA H200",
        "git": {"commit": "ffffffffffff6"},
        "timestamp_utc": "2026-11-30T02:30:00+00:00",
    }
    cut = attrs.evolve(report([1.0]), device_name="NVIDIA H200", partial=True)
    runs.write_run(tmp_path / "cut", manifest, [cut], partial=True)
    given = loaded(saved["a"], tmp_path / "cut", saved["c"])
    (trend,) = history.trends(given, 5.0)
    whole, partial, slower = trend.points
    assert partial.change.verdict == "no verdict"
    assert slower.change.verdict == "slower" and slower.change.regression
    assert slower.change.before == whole.summary
