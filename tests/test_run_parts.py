"""``report --parts``: saved runs read as the parts of one sweep. A sweep cut
in two (a device lease, a CI time limit) must summarise as the whole sweep
does: the same verdicts and the same weighted mean over every point; parts
that cannot be one sweep (a point twice, two device models) are refused in
one line."""

from __future__ import annotations

from pathlib import Path

import attrs
from gemmreg.reporting import runs
from offline_cli import run_main, without_sweep_command

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "evidence/2026-12-04-h200-tma-split-k-llm-decode/bf16-1-16-128/bench"


def split(tmp_path: Path, at: int) -> tuple[Path, Path]:
    """The saved sweep written again as two runs: its first ``at`` points and the rest."""
    manifest, reports, _ = runs.load_run(SWEEP)
    first, second = tmp_path / "first", tmp_path / "second"
    runs.write_run(first, manifest, reports[:at], partial=False)
    runs.write_run(second, manifest, reports[at:], partial=False)
    return first, second


def mean_line(text: str) -> str:
    (line,) = [x for x in text.splitlines() if "geometric-mean speedup" in x]
    return line


def test_parts_summarise_as_the_whole_sweep(tmp_path, capsys):
    whole = run_main(["report", str(SWEEP), "--verdicts"], capsys)
    assert whole.code == 0, whole.err
    first, second = split(tmp_path, 5)
    joined = run_main(["report", "--parts", str(first), str(second), "--verdicts"], capsys)
    assert joined.code == 0, joined.err
    assert mean_line(joined.out) == mean_line(whole.out)
    assert mean_line(joined.out).endswith("; 12 points, weight 21)")  # after its interval
    # the same table, point for point, and the same mean; the line after them names the
    # command that judges the sweep at one level, which names the parts
    assert without_sweep_command(joined.out) == without_sweep_command(whole.out)
    told = [x for x in joined.out.splitlines() if x not in without_sweep_command(joined.out)]
    assert len(told) == 1 and f"{first} {second} --parts --sweep-wide`" in told[0]
    assert "2 runs read as one sweep" in joined.err and "5 points" in joined.err
    # Each part alone summarises its own points only: the reason to join them.
    assert "; 5 points" in mean_line(run_main(["report", str(first)], capsys).out)


def test_without_parts_two_runs_are_still_before_and_after(tmp_path, capsys):
    first, second = split(tmp_path, 6)
    outcome = run_main(["report", str(first), str(second), "--verdicts"], capsys)
    outcome.assert_refused()
    assert "not BEFORE AFTER" in outcome.err


def test_a_point_in_two_parts_is_refused_naming_both(tmp_path, capsys):
    first, _ = split(tmp_path, 6)
    overlapping = tmp_path / "overlapping"
    manifest, reports, _ = runs.load_run(SWEEP)
    runs.write_run(overlapping, manifest, reports[4:], partial=False)
    outcome = run_main(["report", "--parts", str(first), str(overlapping)], capsys)
    outcome.assert_refused()
    assert str(first) in outcome.err and str(overlapping) in outcome.err
    assert "in both" in outcome.err and outcome.out == ""


def test_parts_of_two_device_models_are_refused(tmp_path, capsys):
    first, _ = split(tmp_path, 6)
    manifest, reports, _ = runs.load_run(SWEEP)
    other = tmp_path / "other"
    elsewhere = [attrs.evolve(r, device_name="NVIDIA A100-SXM4-80GB") for r in reports[6:]]
    runs.write_run(other, manifest, elsewhere, partial=False)
    outcome = run_main(["report", "--parts", str(first), str(other)], capsys)
    outcome.assert_refused()
    assert "A100" in outcome.err and "H200" in outcome.err


def test_parts_needs_two_distinct_runs(tmp_path, capsys):
    first, _ = split(tmp_path, 6)
    for argv in (["report", "--parts", str(first)], ["report", "--parts", str(first), str(first)]):
        run_main(argv, capsys).assert_refused()


def unfinished_copy(tmp_path: Path, name: str, at: int) -> Path:
    """A run holding the saved sweep's point ``at`` as an interrupted part
    leaves it: its record ``partial``, its verdict marked so."""
    manifest, reports, _ = runs.load_run(SWEEP)
    path = tmp_path / name
    runs.write_run(path, manifest, [attrs.evolve(reports[at], partial=True)], partial=True)
    return path


def test_a_point_left_unfinished_in_one_part_is_taken_whole_from_another(tmp_path, capsys):
    whole = run_main(["report", str(SWEEP), "--verdicts"], capsys)
    first, second = split(tmp_path, 5)
    cut = unfinished_copy(tmp_path, "cut", 7)  # a point of `second`, unfinished here
    alone = run_main(["report", str(cut), "--verdicts"], capsys)
    assert "[PARTIAL]" in alone.out
    for order in ((first, cut, second), (first, second, cut)):
        joined = run_main(["report", "--parts", *map(str, order), "--verdicts"], capsys)
        assert joined.code == 0, joined.err
        # The whole timing stands: the table and the mean are the whole sweep's.
        assert without_sweep_command(joined.out) == without_sweep_command(whole.out)
        assert mean_line(joined.out) == mean_line(whole.out)
        assert "[PARTIAL]" not in joined.out
        assert f"unfinished in {cut}, taken whole from {second}" in joined.err
        assert f"{cut} (" in joined.err and ", 0 points)" in joined.err
        assert "PARTIAL run" in joined.err  # a part was interrupted: the join says so


def test_a_point_left_unfinished_in_two_parts_is_refused(tmp_path, capsys):
    first, _ = split(tmp_path, 5)
    cuts = [unfinished_copy(tmp_path, name, 7) for name in ("cut1", "cut2")]
    outcome = run_main(["report", "--parts", str(first), *map(str, cuts)], capsys)
    outcome.assert_refused()
    assert "left unfinished in both" in outcome.err and outcome.out == ""


def test_a_point_timed_with_other_plugins_in_another_part_is_refused(tmp_path, capsys):
    """The same point in two parts with another plugin beside the pair: the
    pair would be judged, and counted in the weighted mean, twice."""
    first, _ = split(tmp_path, 6)
    manifest, reports, _ = runs.load_run(SWEEP)
    extra = attrs.evolve(reports[5].summaries[0], kernel="splitk")
    widened = attrs.evolve(reports[5], summaries=(*reports[5].summaries, extra))
    other = tmp_path / "other"
    runs.write_run(other, manifest, [widened], partial=False)
    outcome = run_main(["report", "--parts", str(first), str(other), "--verdicts"], capsys)
    outcome.assert_refused()
    assert "timed in both" in outcome.err and "splitk" in outcome.err


def test_margin_with_two_runs_is_refused_before_any_plot_is_written(tmp_path, capsys):
    """Every refusal comes before work: no picture is left behind by a command
    that then says it cannot run."""
    first, second = split(tmp_path, 6)
    plots = tmp_path / "plots"
    argv = ["report", str(first), str(second), "--margin", "1", "--plot", str(plots)]
    outcome = run_main(argv, capsys)
    outcome.assert_refused()
    assert "--margin judges one run again" in outcome.err
    assert not plots.exists() or not any(plots.iterdir())
