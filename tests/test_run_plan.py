"""What a sweep was asked to time, kept in its run (``manifest.planned``), and
what it answers: a plan no bench could save is refused in one line, and
``report --parts`` is whole when every planned point is timed whole in some
part (an interrupted sweep finished by a second command), partial otherwise,
naming what is still missing. Runs saved before plans read as they did.

The runs here are the H200 sweep of 12 weighted points, written again as the
parts an interrupted sweep and its resumption leave."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest
from gemmreg.reporting import checksums, run_plan, runs
from gemmreg.timing.points import Point
from offline_cli import run_main, without_sweep_command

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "evidence/2026-12-04-h200-tma-split-k-llm-decode/bf16-1-16-128/bench"
PLUGINS = ("torch_ref", "triton_tuned")


def planned_run(
    tmp_path: Path, name: str, planned: slice, kept: slice, partial: bool, cut: int | None = None
) -> Path:
    """The sweep's points ``planned`` as one run's plan, of which it holds
    ``kept``; ``cut``: the index of a point left unfinished (its record partial)."""
    manifest, reports, _ = runs.load_run(SWEEP)
    plan = [Point(r.problem, r.weight or 1.0) for r in reports[planned]]
    manifest = {**manifest, run_plan.PLAN_KEY: run_plan.recorded(PLUGINS, plan, True)}
    held = list(reports[kept])
    if cut is not None:
        held.append(attrs.evolve(reports[cut], partial=True))
    path = tmp_path / name
    runs.write_run(path, manifest, held, partial=partial)
    return path


def mean_line(text: str) -> str:
    (line,) = [x for x in text.splitlines() if "geometric-mean speedup" in x]
    return line


def labels(at: Sequence[int]) -> list[str]:
    _, reports, _ = runs.load_run(SWEEP)
    return [reports[i].problem.label for i in at]


def test_a_resumed_sweep_joins_whole(tmp_path, capsys):
    """Cut at point 6 (5 whole, the 6th unfinished, 6 never started), then
    the 7 it lacked timed by a second run: the join is the whole sweep, with
    no PARTIAL mark anywhere and the weighted mean over all 12 points."""
    whole = run_main(["report", str(SWEEP), "--verdicts"], capsys)
    cut = planned_run(tmp_path, "cut", slice(None), slice(0, 5), True, cut=5)
    rest = planned_run(tmp_path, "rest", slice(5, None), slice(5, None), False)
    joined = run_main(["report", "--parts", str(cut), str(rest), "--verdicts"], capsys)
    assert joined.code == 0, joined.err
    assert without_sweep_command(joined.out) == without_sweep_command(whole.out)
    assert mean_line(joined.out).endswith("; 12 points, weight 21)")  # after its interval
    assert "PARTIAL" not in joined.out and "PARTIAL" not in joined.err
    assert "missing" not in joined.err and "timed whole in no part" not in joined.err
    assert f"unfinished in {cut}, taken whole from {rest}" in joined.err
    table = run_main(["report", "--parts", str(cut), str(rest)], capsys)
    assert not table.out.startswith("[PARTIAL")  # the banner of a stopped run
    data = json.loads(
        run_main(["report", "--parts", str(cut), str(rest), "--format", "json"], capsys).out
    )
    assert data["partial"] is False and "stopped" not in data["manifest"]


def test_a_join_still_lacking_planned_points_is_partial_and_names_them(tmp_path, capsys):
    cut = planned_run(tmp_path, "cut", slice(None), slice(0, 5), True)
    short = planned_run(tmp_path, "short", slice(5, None), slice(5, 9), True, cut=9)
    joined = run_main(["report", "--parts", str(cut), str(short), "--verdicts"], capsys)
    assert joined.code == 0, joined.err
    assert "PARTIAL run" in joined.err
    (line,) = [x for x in joined.err.splitlines() if "timed whole in no part" in x]
    missing = labels([9, 10, 11])
    assert f"3 planned points timed whole in no part: {', '.join(missing)}" in line
    assert f"(planned by {short})" in line and "--resume" in line
    assert "[PARTIAL]" in joined.out  # point 10's verdict: unfinished, no other part has it
    data = json.loads(
        run_main(["report", "--parts", str(cut), str(short), "--format", "json"], capsys).out
    )
    assert data["partial"] is True
    assert [m["point"] for m in data["manifest"]["missing"]] == missing


def test_a_part_without_a_plan_keeps_an_interrupted_join_partial(tmp_path, capsys):
    """A run saved before plans says what it timed, never what it missed."""
    manifest, reports, _ = runs.load_run(SWEEP)
    old = tmp_path / "old"
    runs.write_run(old, manifest, reports[:5], partial=True)
    rest = planned_run(tmp_path, "rest", slice(5, None), slice(5, None), False)
    joined = run_main(["report", "--parts", str(old), str(rest), "--verdicts"], capsys)
    assert joined.code == 0, joined.err
    assert "PARTIAL run" in joined.err and "timed whole in no part" not in joined.err
    # Whole parts without plans join whole, as they always did.
    whole_old = tmp_path / "whole-old"
    runs.write_run(whole_old, manifest, reports[:5], partial=False)
    joined = run_main(["report", "--parts", str(whole_old), str(rest)], capsys)
    assert joined.code == 0 and "PARTIAL" not in joined.err


def test_a_partial_run_names_the_planned_points_it_lacks(tmp_path, capsys):
    cut = planned_run(tmp_path, "cut", slice(None), slice(0, 10), True, cut=10)
    shown = run_main(["report", str(cut)], capsys)
    assert shown.code == 0, shown.err
    (line,) = [x for x in shown.err.splitlines() if "planned points are not timed whole" in x]
    assert f"2 of its 12 planned points are not timed whole: {', '.join(labels([10, 11]))}" in line
    assert f"bench torch_ref triton_tuned --resume {cut} --out NEW" in line


def test_a_run_saved_before_plans_reads_as_it_did(capsys):
    manifest, _, _ = runs.load_run(SWEEP)
    assert run_plan.PLAN_KEY not in manifest and run_plan.plan_of(manifest) is None
    assert run_main(["report", str(SWEEP)], capsys).code == 0


def _plan(data: dict) -> dict:
    return data["manifest"][run_plan.PLAN_KEY]


def _point(data: dict, index: int = 0) -> dict:
    return _plan(data)["points"][index]


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d["manifest"].update(planned=[]), "manifest.planned: expected an object"),
        (lambda d: _plan(d).update(points="all"), "manifest.planned.points: expected a list"),
        (lambda d: _plan(d).update(points=[]), "at least one plugin and one point"),
        (lambda d: _plan(d).update(plugins=["a", "a"]), "a plugin is named twice"),
        (lambda d: _plan(d).pop("plugins"), "manifest.planned: missing field 'plugins'"),
        (lambda d: _point(d).update(extra=1), "points[0]: unknown field 'extra'"),
        (lambda d: _point(d).update(label=3), "points[0].label: expected a string"),
        (lambda d: _point(d)["problem"].update(m=0), "points[0].problem: SpecError"),
        (lambda d: _point(d)["problem"].update(m="1"), "points[0].problem.m: expected an integer"),
        (lambda d: _point(d).update(label="fp32-rowmajor-1x1x1"), "is not its problem's"),
        (lambda d: _point(d).update(weight=0), "points[0].weight: must be above 0"),
        (lambda d: _point(d).update(weight="NaN"), "must be a finite number"),
        (lambda d: _plan(d)["points"].append(_point(d)), "is planned twice"),
        (lambda d: _plan(d)["points"].pop(), "a point outside the run's planned points"),
    ],
    ids=[
        "not-an-object",
        "points-not-a-list",
        "no-points",
        "plugin-twice",
        "no-plugins",
        "unknown-field",
        "label-not-text",
        "zero-size",
        "size-as-text",
        "wrong-label",
        "zero-weight",
        "nan-weight",
        "point-twice",
        "report-outside",
    ],
)
def test_a_plan_no_bench_could_save_is_refused_in_one_line(cli_offline, tmp_path, edit, said):
    run = planned_run(tmp_path, "run", slice(0, 3), slice(0, 3), False)
    path = run / "run.json"
    data = json.loads(path.read_text())
    del data[checksums.CHECKSUM_KEY]
    edit(data)
    path.write_text(checksums.sealed(json.dumps(data)))
    refused = cli_offline("report", str(run))
    refused.assert_refused()
    assert said in refused.err and str(path) in refused.err
