"""Shapes and layouts for timing: ``--shape`` with per-dimension
ranges, ``--shapes FILE`` (YAML, JSON, CSV) with weights, ``--layout`` on
``compare`` and ``bench``, and every malformed file refused in one line that
names the file and the row, before any work starts."""

from __future__ import annotations

import json
import math
import sys

import attrs
import pytest
from conftest import FIRST_PROTOCOL_SWEEP, REPO, run_gemmreg
from gemmreg.contract.options import MAX_SWEEP_POINTS, UsageError, parse_shapes
from gemmreg.reporting import runs
from gemmreg.reporting.speedup_means import mean_lines
from gemmreg.timing.points import points
from gemmreg.timing.shape_files import ShapeRow, read_shapes
from gemmreg.timing.weighted import pair_means
from offline_cli import forbid_work, run_main

EXAMPLES = REPO / "examples" / "shapes"

# ---------------------------------------------------------------------------
# --shape with ranges per dimension
# ---------------------------------------------------------------------------


def test_each_dimension_takes_a_range_and_the_shapes_are_their_product():
    assert parse_shapes("1024:3072:1024x4096x512:2048:*2") == [
        (m, 4096, k) for m in (1024, 2048, 3072) for k in (512, 1024, 2048)
    ]


def test_a_geometric_range_stops_at_or_before_its_stop():
    assert parse_shapes("256:4096:*2") == [(s, s, s) for s in (256, 512, 1024, 2048, 4096)]
    assert parse_shapes("8x3:100:*3x8") == [(8, n, 8) for n in (3, 9, 27, 81)]


def test_the_old_forms_mean_what_they_meant():
    assert parse_shapes("256:1024:256,2048,8x16x32") == [
        (256, 256, 256),
        (512, 512, 512),
        (768, 768, 768),
        (1024, 1024, 1024),
        (2048, 2048, 2048),
        (8, 16, 32),
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("8:4:1x8x8", "malformed range '8:4:1'"),
        ("8x8:16:0x8", "STEP >= 1"),
        ("8x8x8:64:*1", "FACTOR >= 2"),
        ("8x8x8:64:*", "malformed range"),
        ("1:2000:1x8x8", "more than 1000 sizes"),
        ("1:100:1x1:100:1x8", f"more than {MAX_SWEEP_POINTS} shapes"),
        ("8x8", "malformed shape '8x8'"),
        ("8x0:4:2x8", "1 <= START"),
        ("8x8x", "malformed shape"),
        ("8x8x8x8", "malformed shape"),
    ],
)
def test_a_bad_range_is_refused_by_name(text, says):
    with pytest.raises(UsageError, match=None) as refused:
        parse_shapes(text)
    assert says in str(refused.value)


# ---------------------------------------------------------------------------
# --shapes FILE
# ---------------------------------------------------------------------------


def test_the_example_files_hold_llama_3_8b_projections_and_agree():
    pytest.importorskip("yaml")
    from_yaml = read_shapes(EXAMPLES / "llm-projections.yaml")
    from_csv = read_shapes(EXAMPLES / "llm-projections.csv")
    assert from_yaml == from_csv
    assert sorted({row.m for row in from_yaml}) == [1, 16, 128, 2048, 8192]
    hidden, kv, mlp = 4096, 8 * 128, 14336
    per_tokens = {(row.n, row.k): row.weight for row in from_yaml if row.m == 128}
    assert per_tokens == {(hidden, hidden): 2, (kv, hidden): 2, (mlp, hidden): 2, (hidden, mlp): 1}
    assert {(row.dtype, row.layout) for row in from_yaml} == {("bf16", "transposedB")}


@pytest.mark.parametrize("path", sorted(EXAMPLES.iterdir()), ids=lambda path: path.name)
def test_every_example_shapes_file_reads_into_points(path):
    if path.suffix in (".yaml", ".yml"):
        pytest.importorskip("yaml")
    rows = read_shapes(path)
    assert rows and points([], rows, ["fp32"], ["rowmajor"])


def test_json_rows_may_leave_dtype_layout_and_weight_to_the_command(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "shapes": [
                    {"m": 8, "n": 16, "k": 32},
                    {"m": 4, "n": 4, "k": 4, "weight": 0.5, "dtype": "fp16"},
                ]
            }
        )
    )
    rows = read_shapes(path)
    assert rows == [ShapeRow(8, 16, 32), ShapeRow(4, 4, 4, dtype="fp16", weight=0.5)]
    chosen = points([], rows, ["fp32", "bf16"], ["rowmajor", "padded"])
    assert [(p.problem.label, p.weight) for p in chosen] == [
        ("fp32-rowmajor-8x16x32", 1.0),
        ("fp32-padded-8x16x32", 1.0),
        ("bf16-rowmajor-8x16x32", 1.0),
        ("bf16-padded-8x16x32", 1.0),
        ("fp16-rowmajor-4x4x4", 0.5),
        ("fp16-padded-4x4x4", 0.5),
    ]


def test_shapes_times_dtypes_times_layouts_is_bounded():
    shapes = [(8, 8, k) for k in range(1, 301)]
    assert len(points(shapes, [], ["fp32"], ["rowmajor", "padded", "transposedA"])) == 900
    with pytest.raises(UsageError, match="300 shapes x 2 dtypes x 2 layouts make 1200 points"):
        points(shapes, [], ["fp32", "fp16"], ["rowmajor", "padded"])


CSV_HEADER = "m,n,k,dtype,layout,weight\n"
MALFORMED = {
    "missing.csv": (CSV_HEADER.replace("k,", "") + "8,8,fp32,rowmajor,1\n", "row 1: missing k"),
    "number.csv": (CSV_HEADER + "8,8,8,,,1\n8,8x,8,,,1\n", "row 2: n must be a positive integer"),
    "zero.json": ('[{"m": 0, "n": 8, "k": 8}]', "row 1: m must be a positive integer"),
    "float.json": ('[{"m": 8.0, "n": 8, "k": 8}]', "row 1: m must be a positive integer"),
    "bool.json": ('[{"m": true, "n": 8, "k": 8}]', "row 1: m must be a positive integer"),
    "unicode.csv": (CSV_HEADER + "8,８,8,,,\n", "row 1: n must be a positive integer"),
    "dtype.json": ('[{"m": 8, "n": 8, "k": 8, "dtype": "fp64"}]', "row 1: unknown dtype 'fp64'"),
    "layout.csv": (CSV_HEADER + "8,8,8,fp32,colmajor,\n", "row 1: unknown layout 'colmajor'"),
    "weight.csv": (CSV_HEADER + "8,8,8,,,0\n", "row 1: weight must be a number above 0"),
    "nan.csv": (CSV_HEADER + "8,8,8,,,nan\n", "row 1: weight must be a number above 0"),
    "negative.json": ('[{"m": 8, "n": 8, "k": 8, "weight": -2}]', "row 1: weight must be"),
    "empty.csv": ("", "no shapes in it"),
    "comments.csv": ("# nothing but a comment\n" + CSV_HEADER, "no shapes in it"),
    "empty.json": ("[]", "no shapes in it"),
    "object.json": ('{"m": 8}', "expected a list of rows"),
    "scalar.json": ("[8]", "row 1: expected a mapping"),
    "invalid.json": ('[{"m": 8,', "not valid JSON"),
    "column.csv": ("m,n,k,wieght\n8,8,8,1\n", "header: unknown column 'wieght'"),
    "twice.csv": ("m,n,k,m\n8,8,8,8\n", "header names a column twice"),
    "extra.csv": (CSV_HEADER + "8,8,8,fp32,rowmajor,1,7\n", "row 1: more cells than the header"),
    "key.json": ('[{"m": 8, "n": 8, "k": 8, "tokens": 4}]', "row 1: unknown column 'tokens'"),
    "twin.csv": (
        CSV_HEADER + "8,8,8,fp32,,1\n16,8,8,,,\n8,8,8,fp32,,2\n",
        "row 3 repeats row 1 (8x8x8 fp32 any layout)",
    ),
    "shapes.txt": ("8,8,8", "unknown file type '.txt'"),
    "huge.csv": (CSV_HEADER + "8,8,8,,,1e13\n", "weight must be a number above 0 up to 1e+12"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_shapes_file_is_refused_naming_file_and_row(name, tmp_path):
    text, says = MALFORMED[name]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as refused:
        read_shapes(path)
    assert says in str(refused.value) and str(path) in str(refused.value)


def test_unreadable_paths_are_refused(tmp_path):
    for path, says in [
        (tmp_path / "missing.csv", "cannot read it"),
        (tmp_path, "unknown file type"),
        (tmp_path / "dir.json", "is a directory, not a file"),
    ]:
        if path.name == "dir.json":
            path.mkdir()
        with pytest.raises(UsageError, match=says):
            read_shapes(path)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"m,n,k\n\xff\xfe,8,8\n")
    with pytest.raises(UsageError, match="cannot read it"):
        read_shapes(binary)


def test_yaml_without_pyyaml_says_how_to_install_it(tmp_path, monkeypatch):
    path = tmp_path / "s.yaml"
    path.write_text("- {m: 8, n: 8, k: 8}\n")
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now raises ImportError
    with pytest.raises(UsageError, match="pip install pyyaml"):
        read_shapes(path)


def test_malformed_yaml_is_one_line(tmp_path):
    pytest.importorskip("yaml")
    path = tmp_path / "s.yml"
    path.write_text("- {m: 8, n: [8\n")
    with pytest.raises(UsageError, match="not valid YAML") as refused:
        read_shapes(path)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["bench", "torch_ref", "--shapes", "BAD"], "row 1: unknown layout"),
        (["bench", "torch_ref", "--shapes", "MISSING"], "cannot read it"),
        (["bench", "torch_ref", "--shapes", ""], "--shapes: is empty: name a file"),
        (["bench", "torch_ref", "--shape", "8", "--shapes", "GOOD"], "not allowed with"),
        (["bench", "torch_ref"], "one of the arguments --shape --shapes --resume is required"),
        (["bench", "torch_ref", "--shape", "8", "--layout", "colmajor"], "unknown layout"),
        (["bench", "torch_ref", "--shape", "8", "--layout", "padded,padded"], "twice"),
        (["compare", "torch_ref", "triton_grouped", "--shapes", "GOOD"], "makes 2 points"),
        (["compare", "torch_ref", "triton_grouped", "--layout", "padded,rowmajor"], "one --layout"),
    ],
)
def test_the_commands_refuse_bad_shapes_before_any_work(argv, says, tmp_path, monkeypatch, capsys):
    (tmp_path / "bad.csv").write_text(CSV_HEADER + "8,8,8,fp32,diagonal,1\n")
    (tmp_path / "good.csv").write_text(CSV_HEADER + "8,8,8,fp32,,1\n16,8,8,fp32,,1\n")
    named = {"BAD": "bad.csv", "GOOD": "good.csv", "MISSING": "missing.yaml"}
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMMREG_PLUGINS", "torch_ref,triton_grouped")
    forbid_work(monkeypatch)
    outcome = run_main([named.get(a, a) for a in argv], capsys)
    outcome.assert_refused()
    assert says in outcome.err


def test_bench_over_a_shapes_file_keeps_weights_and_layouts_in_the_run(tmp_path):
    shapes = tmp_path / "shapes.csv"
    shapes.write_text("# two points\nm,n,k,layout,weight\n8,16,8,transposedB,3\n8,8,8,,\n")
    out = tmp_path / "run"
    done = run_gemmreg(
        "bench",
        "torch_ref",
        "--shapes",
        str(shapes),
        "--processes",
        "1",
        "--repeats",
        "2",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    manifest, reports, partial = runs.load_run(out)
    assert not partial and manifest["shapes_file"] == str(shapes)
    assert [(r.problem.label, r.weight) for r in reports] == [
        ("fp32-transposedB-8x16x8", 3.0),
        ("fp32-rowmajor-8x8x8", 1.0),
    ]
    assert "[1/2] 8x16x8 fp32 transposedB: timing torch_ref" in done.stderr
    assert "progress: 2/2 points, elapsed " in done.stderr  # not a terminal: plain lines
    header = done.stdout.splitlines()[0].split()
    assert header[:4] == ["shape", "dtype", "layout", "plugin"]


# ---------------------------------------------------------------------------
# The weighted geometric-mean speedup
# ---------------------------------------------------------------------------


def _with_speedup(report, speedup, weight):
    (verdict,) = report.verdicts
    return attrs.evolve(report, verdicts=(attrs.evolve(verdict, speedup=speedup),), weight=weight)


def test_the_weighted_geometric_mean_counts_each_point_by_its_weight():
    """The H200 sweep of triton_tuned against torch_ref, its speedups set to
    2x and 0.5x: equal weights cancel out to 1x, weights 3 and 1 give
    2^(3/4) * 0.5^(1/4) = 2^(1/2)."""
    _, saved, _ = runs.load_run(FIRST_PROTOCOL_SWEEP)
    first, second = saved[0], saved[1]
    (mean,) = pair_means([_with_speedup(first, 2.0, None), _with_speedup(second, 0.5, None)])
    assert mean.speedup == pytest.approx(1.0) and not mean.weighted and mean.points == 2
    reports = [_with_speedup(first, 2.0, 3.0), _with_speedup(second, 0.5, 1.0)]
    (mean,) = pair_means(reports)
    assert mean.speedup == pytest.approx(math.sqrt(2)) and mean.weighted and mean.weight == 4
    assert mean_lines(reports) == [
        "weighted geometric-mean speedup: triton_tuned vs torch_ref: 1.414x "
        "(2 points, weight 4; no interval: none at 2 of them)"
    ]


def test_points_without_a_speedup_do_not_count():
    _, saved, _ = runs.load_run(FIRST_PROTOCOL_SWEEP)
    reports = [_with_speedup(saved[0], 4.0, 1.0), _with_speedup(saved[1], None, 100.0)]
    (mean,) = pair_means(reports)
    assert mean.speedup == pytest.approx(4.0) and mean.points == 1
    assert pair_means([_with_speedup(saved[0], None, 1.0)]) == []


def test_a_saved_run_without_weights_still_reads(tmp_path):
    """``weight`` is a new field with a default: runs saved before it load as None."""
    _, saved, _ = runs.load_run(FIRST_PROTOCOL_SWEEP)
    assert all(r.weight is None for r in saved)
    runs.write_run(
        tmp_path / "r", {}, [attrs.evolve(saved[0], weight=2.5)], partial=False, views={}
    )
    assert runs.load_run(tmp_path / "r")[1][0].weight == 2.5


def test_invalid_and_unjudged_points_are_left_out_of_the_mean_and_counted():
    """An INVALID pair keeps the estimate the guards refused (a kernel that
    skipped its work read up to 8.2x), and a saved interrupted point may keep
    one: neither is a speed figure, so neither moves the mean, and the line
    says how many were left out."""
    _, saved, _ = runs.load_run(FIRST_PROTOCOL_SWEEP)
    (verdict,) = saved[1].verdicts
    skipped_work = attrs.evolve(
        saved[1], verdicts=(attrs.evolve(verdict, verdict="invalid", speedup=90.0),), weight=1.0
    )
    cut = attrs.evolve(
        saved[2], verdicts=(attrs.evolve(verdict, verdict="no verdict", speedup=50.0),), weight=1.0
    )
    reports = [_with_speedup(saved[0], 1.5, 1.0), skipped_work, cut]
    (mean,) = pair_means(reports)
    assert mean.speedup == pytest.approx(1.5) and mean.points == 1 and mean.left_out == 2
    assert mean_lines(reports) == [
        "geometric-mean speedup: triton_tuned vs torch_ref: 1.5x "
        "(1 point; 2 left out: INVALID or no verdict; no interval: none at 1 of them)"
    ]
