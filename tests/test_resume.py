"""``bench --resume RUN --out NEW``: a sweep cut short is finished by a second
command that times only what RUN planned and lacks whole, and ``report
--parts RUN NEW`` is then the whole sweep.

The sweeps are real (twin_a and twin_b on the CPU, tiny points, fixed
processes); the cut is made at a known point, never by a signal racing a
timer: the Nth point's record comes back partial, as a point Ctrl-C cut
short does, and the sweep stops there and saves what it has, as it does on
Ctrl-C."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import attrs
import pytest
from conftest import REPO, TESTS
from gemmreg.reporting import run_plan, runs
from offline_cli import run_main

TWINS = ("twin_a", "twin_b")
SHAPE = ("--shape", "8,16,24")
TIMING = ("--processes", "2", "--repeats", "3")
"""The cheapest sweep with a pair to judge: two processes of three rounds."""
ENV = {
    "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
    "GEMMREG_EXTRA_PLUGINS": "timing_plugins.twins",
    "GEMMREG_PLUGINS": "none",
}
CUT_CLI = textwrap.dedent(
    """
    import sys
    import attrs
    from gemmreg import cli
    from gemmreg.fanout import sweeping

    cut_at, timed = int(sys.argv[1]), []
    real = sweeping.time_point

    def time_point(*args, **kwargs):  # point N comes back cut short, as Ctrl-C leaves one
        report = real(*args, **kwargs)
        timed.append(report)
        return attrs.evolve(report, partial=True) if len(timed) == cut_at else report

    sweeping.time_point = time_point
    sys.argv = ["gemmreg", *sys.argv[2:]]
    cli.run()
    """
)


def bench(*args: str, cut_at: int = 0) -> subprocess.CompletedProcess[str]:
    """The real command line; ``cut_at``: the point left partial (0: none)."""
    return subprocess.run(
        [sys.executable, "-c", CUT_CLI, str(cut_at), "bench", *TWINS, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **ENV},
        cwd=REPO,
    )


def labels(run: Path) -> list[str]:
    return [r.problem.label for r in runs.load_run(run)[1]]


def planned(run: Path) -> list[str]:
    plan = run_plan.plan_of(runs.load_run(run)[0])
    assert plan is not None and plan.plugins == TWINS
    return plan.labels


P8, P16, P24 = (f"fp32-rowmajor-{n}x{n}x{n}" for n in (8, 16, 24))


@pytest.fixture(scope="module")
def cut(tmp_path_factory) -> Path:
    """A sweep of three points cut short in its second: 8 whole, 16 partial,
    24 never started."""
    path = tmp_path_factory.mktemp("resume") / "cut"
    done = bench(*SHAPE, *TIMING, "--out", str(path), cut_at=2)
    assert done.returncode == 130, done.stderr[-3000:]
    return path


def test_an_interrupted_sweep_keeps_what_it_was_asked_to_time(cut):
    assert planned(cut) == [P8, P16, P24]
    manifest, reports, partial = runs.load_run(cut)
    assert partial and [(r.problem.label, r.partial) for r in reports] == [
        (P8, False),
        (P16, True),
    ]
    assert json.loads((cut / "manifest.json").read_text())["planned"] == manifest["planned"]


def test_resume_times_what_the_run_lacks_and_the_parts_join_whole(cut, tmp_path, capsys):
    new, before = tmp_path / "new", (cut / "run.json").read_bytes()
    done = bench("--resume", str(cut), "--out", str(new), *TIMING)
    assert done.returncode == 0, done.stderr[-3000:]
    err = done.stderr.splitlines()
    assert (
        f"gemmreg: --resume {cut}: timing 2 of its 3 planned points, those it lacks "
        f"whole: {P16} (left partial), {P24}" in err
    )
    assert f"gemmreg: --resume {cut}: it has 1 point whole: {P8}" in err
    assert "[1/2] 16x16x16 fp32" in done.stderr and "[3/" not in done.stderr
    assert labels(new) == planned(new) == [P16, P24]
    manifest, _, partial = runs.load_run(new)
    assert not partial and manifest["resumed_from"] == str(cut)
    assert (cut / "run.json").read_bytes() == before  # the run resumed is never written

    joined = run_main(["report", "--parts", str(cut), str(new), "--verdicts"], capsys)
    assert joined.code == 0, joined.err
    assert "PARTIAL" not in joined.out and "PARTIAL" not in joined.err
    assert [line.split()[0] for line in joined.out.splitlines()[2:5]] == [
        "8x8x8",
        "16x16x16",
        "24x24x24",
    ]
    assert f"{P16}: unfinished in {cut}, taken whole from {new}" in joined.err


def test_with_no_timing_option_the_rest_is_timed_as_the_run_was_asked(cut, tmp_path):
    """The cut run was asked for 2 processes of 3 rounds: so is its rest,
    unless the resumption names timing options of its own."""
    assert runs.load_run(cut)[0][run_plan.TIMING_KEY] == {"processes": 2, "repeats": 3}
    new = tmp_path / "new"
    done = bench("--resume", str(cut), "--out", str(new))
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        f"gemmreg: --resume {cut}: timing as it was asked: --processes 2 --repeats 3"
        in done.stderr.splitlines()
    )
    manifest, reports, _ = runs.load_run(new)
    assert manifest[run_plan.TIMING_KEY] == {"processes": 2, "repeats": 3}
    assert [r.processes for r in reports] == [2, 2]


def test_a_join_of_parts_timed_with_other_options_says_so(cut, tmp_path, capsys):
    new = tmp_path / "new"
    done = bench("--resume", str(cut), "--out", str(new), "--processes", "3", "--repeats", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "timing as it was asked" not in done.stderr
    joined = run_main(["report", "--parts", str(cut), str(new)], capsys)
    assert joined.code == 0, joined.err
    assert (
        f"; timed with other options: {cut} (--processes 2 --repeats 3), "
        f"{new} (--processes 3 --repeats 2)" in joined.err
    )


def test_a_resumption_cut_short_is_resumed_in_turn(cut, tmp_path, capsys):
    """The second command is interrupted too: the join says what is still
    missing, and resuming the second run finishes the sweep."""
    second, third = tmp_path / "second", tmp_path / "third"
    done = bench("--resume", str(cut), "--out", str(second), *TIMING, cut_at=2)
    assert done.returncode == 130, done.stderr[-3000:]
    joined = run_main(["report", "--parts", str(cut), str(second)], capsys)
    assert joined.code == 0, joined.err
    assert "PARTIAL run" in joined.err
    # Named with the part to resume: cut's plan holds 16, which second has whole.
    assert f"1 planned point timed whole in no part: {P24} (planned by {second})" in joined.err
    done = bench("--resume", str(second), "--out", str(third), *TIMING)
    assert done.returncode == 0, done.stderr[-3000:]
    assert labels(third) == planned(third) == [P24]
    joined = run_main(["report", "--parts", str(cut), str(second), str(third)], capsys)
    assert joined.code == 0, joined.err
    assert "PARTIAL" not in joined.out and "PARTIAL" not in joined.err


def test_resume_refusals_are_one_line_before_any_work(cut, cli_offline, tmp_path):
    whole = tmp_path / "whole"
    manifest, reports, _ = runs.load_run(cut)
    runs.write_run(
        whole,
        {
            **manifest,
            "planned": {**manifest["planned"], "points": [manifest["planned"]["points"][0]]},
        },
        reports[:1],
        partial=False,
    )
    old = tmp_path / "old"
    runs.write_run(old, {k: v for k, v in manifest.items() if k != "planned"}, reports, True)
    resume = ("bench", *TWINS, "--resume")
    cases = [
        ((*resume, str(whole)), "nothing left: every one of its planned points (1) is timed whole"),
        ((*resume, str(old)), "records no planned points"),
        ((*resume, str(tmp_path / "none")), "no such run directory"),
        (("bench", "twin_b", "twin_a", "--resume", str(cut)), "resume with the same plugins"),
        (("bench", "twin_a", "--resume", str(cut)), "the plugins named are twin_a:"),
        ((*resume, str(cut), "--shape", "8"), "--shape: not allowed with argument --resume"),
        ((*resume, str(cut), "--shapes", "x.yaml"), "not allowed with argument --resume"),
        ((*resume, str(cut), "--dtype", "fp32"), "--dtype is not taken with it"),
        ((*resume, str(cut), "--layout", "padded"), "--layout is not taken with it"),
        ((*resume, str(cut), "--batch", "2"), "--batch is not taken with it"),
        ((*resume, str(cut), "--out", str(cut), "--force"), "is the run being resumed"),
        (("bench", *TWINS), "one of the arguments --shape --shapes --resume is required"),
    ]
    malformed = tmp_path / "malformed"
    bad = {**manifest["planned"], "points": [{**manifest["planned"]["points"][0], "weight": -1}]}
    runs.write_run(malformed, {**manifest, "planned": bad}, reports[:1], partial=True)
    cases.append(((*resume, str(malformed)), "manifest.planned.points[0].weight: must be above 0"))
    for argv, said in cases:
        refused = cli_offline(*argv)
        refused.assert_refused()
        assert said in refused.err, (argv, refused.err)
    assert labels(cut) == [P8, P16]  # --force never reached it


def test_a_weighted_sweep_is_resumed_with_its_weights(tmp_path, capsys):
    shapes = tmp_path / "shapes.json"
    rows = [{"m": 8, "n": 8, "k": 8, "weight": 3}, {"m": 16, "n": 16, "k": 16, "weight": 2}]
    shapes.write_text(json.dumps(rows))
    first, second = tmp_path / "first", tmp_path / "second"
    done = bench("--shapes", str(shapes), *TIMING, "--out", str(first), cut_at=1)
    assert done.returncode == 130, done.stderr[-3000:]
    done = bench("--resume", str(first), "--out", str(second), *TIMING)
    assert done.returncode == 0, done.stderr[-3000:]
    manifest, reports, _ = runs.load_run(second)
    assert [(r.problem.label, r.weight) for r in reports] == [(P8, 3.0), (P16, 2.0)]
    assert manifest["shapes_file"] == str(shapes)
    joined = run_main(["report", "--parts", str(first), str(second)], capsys)
    assert joined.code == 0 and "PARTIAL" not in joined.err, joined.err


def test_the_api_resumes_as_the_command_line_does(cut, monkeypatch, tmp_path):
    """``gemmreg.resume(RUN)`` builds the request ``bench --resume RUN`` does
    (the run's kernels, its lacking points, its timing) and hands it to the
    same work; only how it was asked differs in the manifest."""
    import gemmreg
    from gemmreg import cli
    from gemmreg.commands import bench_command
    from offline_cli import Handed, forbid_work, hand_over

    forbid_work(monkeypatch)
    handed = hand_over(monkeypatch, (bench_command, "bench"))
    out = tmp_path / "out"
    with pytest.raises(Handed):
        cli.main(["bench", *TWINS, "--resume", str(cut), "--out", str(out)])
    said: list[str] = []
    with pytest.raises(Handed):
        gemmreg.resume(cut, out=out, progress=said.append)
    typed, called = handed
    assert attrs.evolve(called, manifest={}) == attrs.evolve(typed, manifest={})
    assert [p.problem.label for p in called.points] == [P16, P24]
    assert called.timing.processes == 2 and called.timing.repeats == 3  # the run's own
    assert called.manifest["resumed_from"] == typed.manifest["resumed_from"] == str(cut)
    assert called.manifest["command"] == f"gemmreg.resume({str(cut)!r}, out={out!r})"
    assert said[0] == (
        f"gemmreg: --resume {cut}: timing 2 of its 3 planned points, those it lacks "
        f"whole: {P16} (left partial), {P24}"
    )


def test_the_api_refuses_a_resumption_in_one_line_before_any_work(cut, monkeypatch, tmp_path):
    import gemmreg
    from offline_cli import forbid_work

    forbid_work(monkeypatch)
    cases = [
        (dict(run=cut, kernels=["twin_b", "twin_a"]), "resume with the same plugins"),
        (dict(run=cut, kernels="twin_a"), "resume takes a list of plugin names"),
        (dict(run=tmp_path / "none"), "no such run directory"),
        (dict(run=cut, out=cut, force=True), "is the run being resumed"),
        (dict(run=""), "run: expected a directory's path"),
    ]
    for given, said in cases:
        with pytest.raises(gemmreg.UsageError) as refused:
            gemmreg.resume(**given)
        assert said in str(refused.value) and "\n" not in str(refused.value), (given, refused)
    assert labels(cut) == [P8, P16]
