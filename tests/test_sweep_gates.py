"""A sweep judged and gated at the level of the whole sweep.

``bench --sweep-wide`` judges every point's pairs at the run's level
Bonferroni-corrected over the sweep's points, records how many were judged
together (each report's ``family``, the manifest's ``judged_together``), and
every later reading keeps that level: ``report`` as saved, ``report
--margin``, and ``bench --resume`` for the rest of the sweep. ``report
--fail-on`` gates a saved run's verdicts as judged there, so that a CI job can
gate a sweep at the sweep's level (``report RUN --sweep-wide --fail-on slower``).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import attrs
import pytest
from conftest import run_gemmreg
from gemmreg.commands import resuming
from gemmreg.commands.requests import TimingAsked
from gemmreg.contract.options import UsageError
from gemmreg.reporting import run_plan, runs, speedup_means
from gemmreg.timing import rejudging, stats
from gemmreg.timing.points import Point
from offline_cli import run_main

ROOT = Path(__file__).resolve().parents[1]
LLM = ROOT / "evidence/2026-12-04-h200-llm-projections"
PARTS = [str(LLM / "bf16-1-16-128/bench"), str(LLM / "bf16-2048-8192/bench")]
"""Llama 3 8B's 20 projections, bf16, triton_tuned against cuBLAS, in two parts (H200)."""


def slower_shapes(argv: list[str], capsys) -> set[str]:
    """The points ``report ... --verdicts --format csv`` judges SLOWER."""
    shown = run_main([*argv, "--verdicts", "--format", "csv"], capsys)
    assert shown.code == 0, shown.err
    rows = csv.DictReader(io.StringIO(shown.out))
    return {f"{r['m']}x{r['n']}x{r['k']}" for r in rows if r["verdict"] == "slower"}


def gated_shapes(err: str) -> set[str]:
    """The points the gate's line, the last on stderr, names (``... at LABEL: SLOWER``)."""
    line = err.splitlines()[-1]
    assert line.startswith("gemmreg: --fail-on slower: "), line
    return {part.split(" at ")[1].split(":")[0].split("-")[-1] for part in line.split("; ")}


@pytest.mark.parametrize("level", [[], ["--sweep-wide"]], ids=["each-point", "sweep-wide"])
def test_report_fail_on_gates_the_verdicts_as_judged_there(level, capsys):
    argv = ["report", *PARTS, "--parts", *level]
    expected = slower_shapes(argv, capsys)
    assert expected  # both readings of this sweep have SLOWER points, not the same ones
    gated = run_main([*argv, "--fail-on", "slower"], capsys)
    assert gated.code == 1
    assert gated_shapes(gated.err) <= expected
    assert f"--fail-on slower: {len(expected)} pairs" in gated.err
    assert "Traceback" not in gated.err


def test_the_sweep_wide_gate_differs_from_the_per_point_one(capsys):
    each = slower_shapes(["report", *PARTS, "--parts"], capsys)
    wide = slower_shapes(["report", *PARTS, "--parts", "--sweep-wide"], capsys)
    assert each != wide  # what makes the gate's level matter


def test_report_fail_on_passes_where_no_pair_fails(tmp_path, capsys):
    manifest, reports, _ = runs.load_run(Path(PARTS[0]))
    faster = [r for r in reports if all(v.verdict == "faster" for v in r.verdicts)]
    assert len(faster) >= 2
    runs.write_run(tmp_path / "fast", manifest, faster, partial=False)
    passed = run_main(["report", str(tmp_path / "fast"), "--fail-on", "slower"], capsys)
    assert passed.code == 0, passed.err
    strict = run_main(["report", str(tmp_path / "fast"), "--fail-on", "not-faster"], capsys)
    assert strict.code == 0, strict.err  # every pair FASTER: nothing fails not-faster either


def test_a_partial_run_fails_every_gate(tmp_path, capsys):
    manifest, reports, _ = runs.load_run(Path(PARTS[0]))
    faster = [r for r in reports if all(v.verdict == "faster" for v in r.verdicts)]
    runs.write_run(tmp_path / "cut", manifest, faster, partial=True)
    gated = run_main(["report", str(tmp_path / "cut"), "--fail-on", "slower"], capsys)
    assert gated.code == 1
    assert (
        "gemmreg: --fail-on slower: the run is partial: its missing points have no verdict "
        "to gate" in gated.err
    )


def test_report_fail_on_takes_one_run_or_its_parts(capsys):
    run_main(["report", *PARTS, "--fail-on", "slower"], capsys).assert_refused()
    run_main(["report", *PARTS, PARTS[0], "--fail-on", "slower"], capsys).assert_refused()
    run_main(["report", PARTS[0], "--fail-on", "sometimes"], capsys).assert_refused()


def test_a_family_judged_together_keeps_its_level_when_judged_again():
    _, reports, _ = runs.load_run(Path(PARTS[0]))
    together = [attrs.evolve(r, family=20) for r in reports]
    for report in together:
        (verdict,) = rejudging.rejudge(report, stats.DEFAULT_MARGIN).verdicts  # as recorded
        assert verdict.confidence == pytest.approx(1 - 0.005 / 20)
    line = speedup_means.sweep_level_lines(together, "unused")
    assert line == [
        "verdicts: at 99.5% across the sweep's 12 points together (each point's at 99.975%)"
    ]
    # half of them judged on their own: the bound is the sum of every point's share
    mixed = together[:6] + list(reports[6:])
    (bound,) = speedup_means.sweep_level_lines(mixed, "C")
    assert "over 12 points a false claim somewhere among them is bounded by 3.15%" in bound


def test_a_family_below_one_is_refused_as_a_record():
    _, reports, _ = runs.load_run(Path(PARTS[0]))
    with pytest.raises(ValueError):
        attrs.evolve(reports[0], family=0)


def _cut_run(tmp_path: Path, together: int | None) -> Path:
    """The first part saved with its first five points only (seven left to
    time), judged together with ``together`` points, or each on its own."""
    manifest, reports, _ = runs.load_run(Path(PARTS[0]))
    points = [Point(r.problem, 1.0 if r.weight is None else r.weight) for r in reports]
    plugins = [s.kernel for s in reports[0].summaries]
    manifest = {**manifest, run_plan.PLAN_KEY: run_plan.recorded(plugins, points, True)}
    if together is not None:
        manifest = {**manifest, run_plan.FAMILY_KEY: together}
        reports = [attrs.evolve(r, family=together) for r in reports]
    runs.write_run(tmp_path / "cut", manifest, reports[:5], partial=True)
    return tmp_path / "cut"


def test_resume_judges_the_rest_of_a_sweep_wide_run_with_its_whole_family(tmp_path):
    cut = _cut_run(tmp_path, 12)
    request, lines = resuming.resume_request(cut, None, None, False, TimingAsked())
    assert len(request.points) == 7
    assert request.sweep_wide and request.family == 12
    assert f"gemmreg: --resume {cut}: judged as it was, together with its 12 points" in "\n".join(
        lines
    )


def test_resume_refuses_sweep_wide_for_a_run_judged_point_by_point(tmp_path):
    cut = _cut_run(tmp_path, None)
    request, _ = resuming.resume_request(cut, None, None, False, TimingAsked())
    assert not request.sweep_wide and request.family is None
    with pytest.raises(UsageError, match="drop --sweep-wide"):
        resuming.resume_request(cut, None, None, False, TimingAsked(), sweep_wide=True)


def test_resume_refuses_a_family_that_is_not_a_count(tmp_path):
    cut = _cut_run(tmp_path, 12)
    saved = json.loads((cut / "run.json").read_text())
    saved["manifest"][run_plan.FAMILY_KEY] = "all"
    (cut / "run.json").write_text(json.dumps(saved))
    with pytest.raises(UsageError):
        resuming.resume_request(cut, None, None, False, TimingAsked())


def test_bench_sweep_wide_judges_and_saves_at_the_sweeps_level(fake_plugins, tmp_path):
    fake_plugins("good")
    out = tmp_path / "sweep"
    done = run_gemmreg(
        *("bench", "torch_ref", "fake_good", "--shape", "8x8x8,16x8x8", "--processes", "3"),
        *("--repeats", "3", "--warmup", "1", "--sweep-wide", "--out", str(out)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    line = "verdicts: at 99.5% across the sweep's 2 points together (each point's at 99.75%)"
    assert done.stdout.rstrip().splitlines()[-1] == line
    assert (
        "gemmreg: the sweep's 2 points are judged together: each point's pairs at 99.75%, so "
        "that a claim anywhere among them holds at 99.5%" in done.stderr
    )
    manifest, reports, _ = runs.load_run(out)
    assert manifest[run_plan.FAMILY_KEY] == 2
    assert [r.family for r in reports] == [2, 2]
    for report in reports:
        margin = report.margin
        assert margin is not None
        # the words saved are those of the two points judged together, from the same processes
        alone = attrs.evolve(report, family=1)
        together = rejudging.rejudge(alone, margin, points=2).verdicts
        assert [v.verdict for v in report.verdicts] == [v.verdict for v in together]
        assert rejudging.rejudge(report, margin).verdicts == together  # as recorded
        for verdict in report.verdicts:  # an EQUIVALENT may rest on the TOST interval instead
            if verdict.verdict != "equivalent":
                assert verdict.confidence == pytest.approx(1 - 0.005 / 2)
    shown = run_gemmreg("report", str(out))
    assert shown.stdout.rstrip().splitlines()[-1] == line
    again = run_gemmreg("report", str(out), "--margin", "2")
    assert again.returncode == 0, again.stderr
    assert again.stdout.rstrip().splitlines()[-1] == line  # judged again, at the same level


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["fake_good", "--shape", "8x8x8,16x8x8"], "one kernel makes no pair"),
        (["torch_ref", "fake_good", "--shape", "8x8x8"], "this sweep has one point"),
    ],
    ids=["one-kernel", "one-point"],
)
def test_bench_sweep_wide_that_would_change_nothing_is_refused(argv, said, cli_offline):
    refused = cli_offline("bench", *argv, "--sweep-wide")
    refused.assert_refused()
    assert said in refused.err


def test_the_python_api_takes_sweep_wide_as_a_switch():
    import gemmreg

    with pytest.raises(UsageError, match="sweep_wide: expected True or False"):
        gemmreg.bench(["torch_ref", "triton_tuned"], "8x8x8,16x8x8", sweep_wide="yes")  # type: ignore[arg-type]
