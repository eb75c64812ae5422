"""``scripts/tune_triton_tuned_llm.py`` on the CPU: which points and dtype it
hands to the tuner and to ``gemmreg bench`` (the tuning itself needs a GPU,
and says so)."""

from __future__ import annotations

import json

import pytest
from conftest import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("tune_triton_tuned_llm")


def test_by_default_it_runs_the_llm_file_as_it_is(script, tmp_path):
    args = script.parse_args(["--out", str(tmp_path)])
    path, rows = script.shapes_file(args)
    assert path == script.DEFAULT_SHAPES and len(rows) == 20
    assert {row["dtype"] for row in rows} == {"bf16"}
    assert not (tmp_path / "shapes.json").exists()


def test_points_and_dtype_make_a_file_of_exactly_those_rows(script, tmp_path):
    args = script.parse_args(["--out", str(tmp_path), "--points", "1,128", "--dtype", "fp16"])
    path, rows = script.shapes_file(args)
    assert path == tmp_path / "shapes.json"
    written = json.loads(path.read_text())["shapes"]
    assert written == rows and len(rows) == 8
    assert {row["m"] for row in rows} == {1, 128} and {row["dtype"] for row in rows} == {"fp16"}
    assert all(row["layout"] == "transposedB" and row["weight"] for row in rows)


def test_tuning_without_a_gpu_stops_with_one_line(script, tmp_path, monkeypatch):
    for name in script.TUNING_ENV:
        monkeypatch.setenv(name, "")  # the script sets them: put them back afterwards
    with pytest.raises(SystemExit, match="needs a CUDA GPU"):
        script.main(["--out", str(tmp_path), "--points", "1", "--skip-bench"])


def test_the_filtered_file_is_one_gemmreg_bench_reads(script, tmp_path):
    from gemmreg.timing.shape_files import read_shapes

    args = script.parse_args(["--out", str(tmp_path), "--points", "16"])
    path, rows = script.shapes_file(args)
    read = read_shapes(path)
    assert [(r.m, r.n, r.k, r.dtype, r.layout, r.weight) for r in read] == [
        (row["m"], row["n"], row["k"], row["dtype"], row["layout"], row["weight"]) for row in rows
    ]


def test_tuning_runs_in_a_child_so_the_bench_has_the_gpu_alone(script, tmp_path, monkeypatch):
    """Both halves: the tuner runs in a child process (which exits, CUDA context
    and all) and only then the bench; this process never tunes itself."""
    commands = []

    class Done:
        returncode = 0

    def run(command, **kwargs):
        commands.append(command)
        return Done()

    def tune(*args, **kwargs):
        raise AssertionError("tuned in the process that then waits for the bench")

    monkeypatch.setattr(script.subprocess, "run", run)
    monkeypatch.setattr(script, "tune", tune)
    assert script.main(["--out", str(tmp_path), "--points", "16"]) == 0
    child, bench = commands
    assert child[1].endswith("tune_triton_tuned_llm.py") and child[-1] == "--skip-bench"
    assert "--points" in child and bench[1:4] == ["-m", "gemmreg", "bench"]


def test_a_failed_tuning_child_stops_before_the_bench(script, tmp_path, monkeypatch):
    commands = []

    class Failed:
        returncode = 3

    monkeypatch.setattr(script.subprocess, "run", lambda c, **k: commands.append(c) or Failed())
    assert script.main(["--out", str(tmp_path), "--points", "16"]) == 3
    assert len(commands) == 1


@pytest.mark.parametrize(
    ("extra", "count"),
    [([], ["--processes", "5"]), (["--budget", "60"], ["--budget", "60.0"])],
    ids=["a fixed 5 processes", "a sequential budget"],
)
def test_the_bench_takes_a_fixed_count_or_a_budget_never_both(
    script, tmp_path, monkeypatch, extra, count
):
    """At 10-30 us calls one disturbed process in five leaves a fixed-count
    point INCONCLUSIVE; ``--budget`` lets the bench add processes instead."""
    commands = []

    class Done:
        returncode = 0

    monkeypatch.setattr(script.subprocess, "run", lambda c, **k: commands.append(c) or Done())
    assert script.main(["--out", str(tmp_path), "--points", "16", *extra]) == 0
    bench = commands[-1]
    flags = [a for a in bench if a in ("--processes", "--budget")]
    assert flags == [count[0]]
    assert bench[bench.index(count[0]) + 1] == count[1]


def test_each_point_s_line_says_how_the_pick_fared_against_its_runner_up(script):
    lead = {"runner_up": "gluon_ws:128x256x64-s3-w4-g16", "rounds_won": 7, "rounds": 13}
    text = script.lead_text(lead | {"median_lead": 1.0007})
    assert text == ("; 1.0007x ahead of gluon_ws:128x256x64-s3-w4-g16, faster in 7 of 13 rounds")
    assert script.lead_text(None) == ""  # nothing ranked beside the pick
