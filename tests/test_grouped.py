"""Grouped problems (an MoE layer's grouped GEMM: members of m_i rows sharing
n and k) on the CPU: the record and its saved form, the forms refused, the
capability every plugin refuses unless it declares it, the operands and
offsets, the per-member reference, the matrix's grouped cases, the timing
points and shapes files, the listing, and the cheating kernels caught (in
process, and through ``gemmreg check --grouped``)."""

from __future__ import annotations

import subprocess
import sys

import gemmreg
import pytest
import torch
from fake_plugins.grouped_cheats import SPECS
from gemmreg.checking import matrix
from gemmreg.checking.operands import make_operands
from gemmreg.checking.output_check import check_case
from gemmreg.checking.reference_product import grouped_reference
from gemmreg.contract.grouped_problems import grouped_problem
from gemmreg.contract.serialization import from_jsonable, to_jsonable
from gemmreg.contract.traffic import footprint_bytes, ideal_bytes
from gemmreg.discovery import registry
from gemmreg.timing import fresh_values
from gemmreg.timing.points import points
from gemmreg.timing.shape_files import read_shapes
from gemmreg.timing.vetoes import memory_roof, read_bytes
from gemmreg_plugins import torch_ref

OFFSETS_LATE, SKIPS_NEXT, WRITES_NEXT, FIRST_B, LOOP = SPECS
CHEATS = (OFFSETS_LATE, SKIPS_NEXT, WRITES_NEXT, FIRST_B)
TORCH_REF = torch_ref.TORCH_REF
GROUPS = (0, 1, 17, 0, 33)


def grouped(groups=GROUPS, **fields) -> gemmreg.Problem:
    return grouped_problem(groups, 19, 23, **fields)


def test_a_grouped_problem_is_saved_labelled_and_counted_whole():
    problem = grouped(dtype="bf16")
    assert problem.m == 51 and problem.groups == GROUPS
    assert problem.label == "g5_0_1_17_0_33-bf16-rowmajor-51x19x23"
    saved = to_jsonable(problem)
    assert saved["groups"] == list(GROUPS)
    assert from_jsonable(gemmreg.Problem, saved) == problem
    assert problem.flops == 2 * 51 * 19 * 23
    plain = gemmreg.Problem(m=51, n=19, k=23, dtype="bf16")
    # traffic: the B of the three members with rows; on the device: all five
    assert ideal_bytes(problem) == ideal_bytes(plain) + 2 * 23 * 19 * 2
    assert footprint_bytes(problem) == ideal_bytes(plain) + 4 * 23 * 19 * 2
    assert read_bytes(problem) == (51 * 23 + 3 * 23 * 19) * 2
    assert "groups" not in to_jsonable(plain) and plain.label == "bf16-rowmajor-51x19x23"


def test_the_memory_roof_asks_no_read_of_an_empty_members_weights():
    """Mixtral's decode routing on an H200: 6 of 8 experts have rows, so a call
    must read 6 of the 8 expert weights (705 MB, 147 us at 4.8 TB/s), not all
    8 (940 MB, 196 us). A kernel timed at 171 us is within the roof; one at
    120 us is not."""
    decode = grouped_problem((0, 1, 3, 0, 9, 2, 12, 5), 14336, 4096, dtype="bf16")
    assert memory_roof(0.1707, decode, "NVIDIA H200") == ""
    assert memory_roof(0.120, decode, "NVIDIA H200").startswith("BEYOND MEMORY ROOF")


def test_many_members_are_labelled_by_a_digest_that_tells_groupings_apart():
    one, other = grouped(tuple(range(12))), grouped((*range(10), 11, 10))
    assert one.m == other.m and len(one.groups) == len(other.groups)
    assert one.label.startswith("g12_h") and one.label != other.label


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: gemmreg.Problem(m=5, n=2, k=2, groups=(2, 2)), "rows stacked: 4 for groups 2,2"),
        (lambda: gemmreg.Problem(m=1, n=2, k=2, groups=(2, -1)), "a row count .m. from 0"),
        (lambda: gemmreg.Problem(m=2, n=2, k=2, groups=(2,), batch=2), "not also batched"),
        (lambda: grouped(dtype="int8"), "a grouped problem is fp32, fp16, bf16, not int8"),
        (lambda: gemmreg.Problem(m=2, n=2, k=2, groups=2), "groups must be a list"),
        (lambda: grouped((0, 0)), "every group is empty"),
    ],
)
def test_a_grouped_problem_that_cannot_be_is_refused(make, words):
    with pytest.raises(gemmreg.SpecError, match=words):
        make()


def test_a_plugin_refuses_grouped_problems_unless_it_declares_them():
    precision = {"fp32": gemmreg.Precision(math="ieee_fp32")}
    plain = gemmreg.Capabilities(precision=precision)
    assert plain.grouped is False
    assert plain.unsupported(grouped()) == "5 groups: grouped problems not declared"
    assert gemmreg.Capabilities(precision=precision, grouped=True).unsupported(grouped()) is None


def test_every_built_in_plugin_but_those_declaring_them_refuses_a_grouped_problem():
    """torch_ref (a loop of torch.mm) and triton_tuned (one grouped launch)
    declare grouped problems; every other plugin refuses them with a reason."""
    found = registry.discover()
    takes = {name for name, kernel in found.kernels.items() if kernel.spec.capabilities.grouped}
    assert takes == {"torch_ref", "triton_tuned"}
    refused = [
        kernel.spec.capabilities.unsupported(grouped())
        for name, kernel in found.kernels.items()
        if name not in takes
    ]
    assert refused and all(reason for reason in refused)


@pytest.mark.parametrize("layout", gemmreg.LAYOUTS)
def test_the_operands_stack_the_members_and_carry_their_offsets(layout):
    a, b, offsets = make_operands(TORCH_REF, grouped(layout=layout), 5, "cpu", "normal")
    assert a.shape == (51, 23) and b.shape == (5, 23, 19)
    assert offsets.dtype == torch.int32 and offsets.tolist() == [0, 0, 1, 18, 18, 51]
    assert all(not torch.equal(b[i], b[i + 1]) for i in range(4))  # every member's B differs
    rowmajor = make_operands(TORCH_REF, grouped(), 5, "cpu", "normal")
    assert torch.equal(a, rowmajor[0]) and torch.equal(b, rowmajor[1])  # the same values


def test_the_reference_is_each_members_rows_times_its_own_b():
    a, b = torch.randn(51, 23), torch.randn(5, 23, 19)
    ref, scale = grouped_reference(a, b, GROUPS)
    assert ref.shape == (51, 19) and ref.dtype == torch.float64
    assert torch.allclose(ref[1:18], a[1:18].double() @ b[2].double())
    assert torch.allclose(ref[18:], a[18:].double() @ b[4].double())
    assert torch.allclose(scale[0:1], a[0:1].double().abs() @ b[1].double().abs())


def test_the_reference_passes_and_every_cheat_fails_in_process():
    cases = matrix.build("quick", False, ["fp32"], batches=(), grouped=True)
    assert cases and all(c.problem.groups for c in cases)
    for honest in (TORCH_REF, LOOP):
        assert all(check_case(honest, c.problem, c.seed, "normal").passed for c in cases)
    for cheat in CHEATS:
        failed = [check_case(cheat, c.problem, c.seed, "normal") for c in cases]
        assert any(not r.passed for r in failed), cheat.name
        assert all(" of 5" in r.reason or " of 6" in r.reason for r in failed if not r.passed)
    # an even grouping with no empty member hides the empty-member bugs: the matrix's do not
    even = grouped((4, 4, 4))
    assert check_case(SKIPS_NEXT, even, 1, "normal").passed
    assert check_case(WRITES_NEXT, even, 1, "normal").passed
    result = check_case(FIRST_B, grouped(), 1, "normal")
    assert "in members 1, 2, 4 of 5" in result.reason


def test_a_check_that_names_nothing_has_the_cases_it_had():
    assert matrix.build("quick", False) == matrix.build("quick", False, grouped=False)
    both = matrix.build("quick", False, grouped=True)
    only = matrix.build("quick", False, batches=(), grouped=True)
    assert both == matrix.build("quick", False) + only
    sizes = [size for c in only for size in c.problem.groups]
    assert 0 in sizes and 1 in sizes and len(set(sizes)) > 3  # empty, one-row, uneven
    assert {c.problem.layout for c in only} == set(gemmreg.LAYOUTS)
    assert {c.problem.dtype for c in only} == set(gemmreg.DTYPES)
    assert "k-g5_0_1_17_0_33-fp16-padded-51x19x23" in {c.id("k") for c in only}
    full = matrix.build("full", False, batches=(), grouped=True)
    assert len(full) > len(only) and any(c.problem.groups == (1,) for c in full)


def test_fresh_values_keep_the_offsets_and_move_every_members_b():
    a, b, offsets = (
        torch.arange(6.0).view(3, 2),
        torch.arange(12.0).view(2, 2, 3),
        torch.tensor([0, 1, 3]),
    )
    moved = fresh_values.rotated((a, b, offsets), fresh_values.Shifts(rows=1, columns=2))
    assert torch.equal(moved[0], torch.roll(a, 1, dims=0))
    assert torch.equal(moved[1], torch.roll(b, 2, dims=2))
    assert moved[2] is offsets
    fresh_values.move((a, b, offsets), fresh_values.Shifts(rows=1))
    assert offsets.tolist() == [0, 1, 3]


def test_timing_points_and_a_shapes_files_groups_column(tmp_path):
    chosen = points([(51, 256, 128)], [], ["bf16"], ["rowmajor"], groups=GROUPS)
    assert [p.problem.label for p in chosen] == ["g5_0_1_17_0_33-bf16-rowmajor-51x256x128"]
    shapes = tmp_path / "shapes.csv"
    shapes.write_text('m,n,k,groups\n64,64,64,\n,64,32,"0,1,5"\n6,64,32,"1,5"\n')
    labels = [p.problem.label for p in points([], read_shapes(shapes), ["fp16"], ["rowmajor"])]
    assert labels == [
        "fp16-rowmajor-64x64x64",
        "g3_0_1_5-fp16-rowmajor-6x64x32",
        "g2_1_5-fp16-rowmajor-6x64x32",
    ]
    yaml = tmp_path / "shapes.yaml"
    yaml.write_text("- {n: 8, k: 4, groups: [0, 3]}\n")
    assert read_shapes(yaml)[0].groups == (0, 3) and read_shapes(yaml)[0].m == 3


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('m,n,k,groups\n7,8,4,"1,5"\n', "m 7 is not the sum of its groups (6)"),
        ('n,k,groups\n8,4,"4x8x16,2x8x16"\n', "is a shape: a grouped problem's members share n"),
        ("n,k\n8,4\n", "missing m"),
        ('n,k,groups\n8,4,"0,0"\n', "every group is empty"),
    ],
)
def test_a_shapes_file_refuses_a_grouped_row_that_cannot_be(tmp_path, text, words):
    shapes = tmp_path / "shapes.csv"
    shapes.write_text(text)
    with pytest.raises(gemmreg.UsageError, match="row 1") as refused:
        read_shapes(shapes)
    assert words in str(refused.value)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("bench", "torch_ref", "--shape", "64x32", "--groups", "0,-1"), "a row count from 0"),
        (("bench", "torch_ref", "--shape", "64x32", "--groups", "0,0"), "every group is empty"),
        (
            ("bench", "torch_ref", "--shape", "51x64x32", "--groups", "0,51"),
            "with --groups, give NxK (e.g. 4096x7168): a grouped problem's members share n and k",
        ),
        (
            ("compare", "torch_ref", "torch_ref_tf32", "--shape", "64x32,8x8", "--groups", "1"),
            "compare takes one shape",
        ),
        (
            ("bench", "torch_ref", "--shape", "64x32", "--dtype", "int8", "--groups", "1,2"),
            "a grouped problem is fp32, fp16, bf16, not int8",
        ),
        (
            ("bench", "torch_ref", "--shape", "64x32", "--batch", "2", "--groups", "1,2"),
            "not also batched",
        ),
    ],
)
def test_bad_group_options_are_refused_before_any_work(cli_offline, argv, words):
    done = cli_offline(*argv)
    assert done.code == 2 and words in done.err, done.err


def test_list_shows_which_kernels_take_grouped_problems(capsys):
    from gemmreg import cli

    assert cli.main(["list"]) == 0
    rows = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(rows) if line.startswith("torch_ref "))
    assert any(" grouped " in line + " " for line in rows[start : start + 6])
    start = next(i for i, line in enumerate(rows) if line.startswith("torch_ref_tf32 "))
    assert "grouped" not in "".join(rows[start : start + 3])


@pytest.mark.slow
def test_gemmreg_check_fails_the_cheats(fake_plugins, tmp_path):
    fake_plugins("grouped_cheats")
    cheats = [spec.name for spec in CHEATS]
    argv = [
        *(sys.executable, "-m", "gemmreg", "check", "torch_ref", "grouped_loop", *cheats),
        *("--grouped", "--dtype", "fp32", "--verbose"),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if " g5_" in line or " g6_" in line]
    plain = [line for line in done.stdout.splitlines() if "-17x19x23" in line]
    cells = len(matrix.build("quick", False, ["fp32"], batches=(), grouped=True))
    for honest in ("torch_ref", "grouped_loop"):
        mine = [line for line in rows if line.startswith(honest + " ")]
        assert len(mine) == cells and all(" pass " in line for line in mine), rows
    for cheat in cheats:
        assert any(line.startswith(cheat) and "FAIL" in line for line in rows), rows
        assert all(" pass " in line for line in plain if line.startswith(cheat)), plain


def test_the_python_api_takes_groups_as_the_command_line_does(monkeypatch):
    """compare and bench hand their groups to the same requests as
    ``--groups`` beside ``--shape NxK``, and check its grouped cases as
    ``--grouped`` (the work is stubbed: what is asked is the point); bad
    groups are one UsageError, before any work."""
    from gemmreg import api
    from gemmreg.commands import launching

    monkeypatch.setattr(launching, "answered", lambda work, save, request, progress: request)
    compared = api.compare(["a", "b"], "32x8", dtype="bf16", groups=[0, 1, 5])
    (problem,) = compared.problems(gpu=False)
    assert problem.label == "g3_0_1_5-bf16-rowmajor-6x32x8"
    (default,) = api.compare(["a", "b"], groups="2,3").problems(gpu=False)
    assert default.groups == (2, 3) and default.m == 5
    benched = api.bench(["a"], [(32, 8), "64x16"], groups=(4, 0))
    assert [p.problem.label for p in benched.points] == [
        "g2_4_0-fp32-rowmajor-4x32x8",
        "g2_4_0-fp32-rowmajor-4x64x16",
    ]
    assert api.check(["torch_ref"], grouped=True).grouped
    assert not api.check(["torch_ref"]).grouped
    assert api.compare(["a", "b"]).problems(gpu=False)[0].groups == ()
    for bad, words in (([0, 0], "every group is empty"), ("1,x", "a row count from 0")):
        with pytest.raises(gemmreg.UsageError, match=words):
            api.compare(["a", "b"], "32x8", groups=bad)
    with pytest.raises(gemmreg.UsageError, match="with groups, give"):
        api.bench(["a"], [(6, 32, 8)], groups=(1, 5))


@pytest.mark.parametrize(
    ("options", "batch", "batch_layout", "groups", "shown"),
    [
        (("--groups", "0,2,3", "--shape", "16x8"), "1", "", "0;2;3", "g3_0_2_3 5x16x8"),
        (
            ("--batch", "2", "--batch-layout", "strided", "--shape", "5x16x8"),
            *("2", "strided", "", "b2strided 5x16x8"),
        ),
        (("--shape", "5x16x8"), "1", "", "", "5x16x8"),
    ],
)
def test_a_saved_runs_csv_and_table_tell_grouped_and_batched_points_from_plain_ones(
    tmp_path, options, batch, batch_layout, groups, shown
):
    """summary.csv and ``--format csv`` name the batch, its layout and the
    members, and the sweep's table shows the form before MxNxK: the three
    points share m, n and k, and no row reads as another's."""
    import csv

    argv = [sys.executable, "-m", "gemmreg", "bench", "torch_ref", *options]
    argv += ["--processes", "2", "--max-time", "0.1", "--out", "run"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if "  torch_ref  " in line]
    assert rows and all(line.split("  ")[0] == shown for line in rows), done.stdout
    report = [sys.executable, "-m", "gemmreg", "report", "run", "--format", "csv"]
    again = subprocess.run(report, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    saved = list(csv.DictReader((tmp_path / "run" / "summary.csv").open()))
    assert saved == list(csv.DictReader(again.stdout.splitlines())) and len(saved) == 1
    (row,) = saved
    assert (row["m"], row["n"], row["k"], row["kernel"]) == ("5", "16", "8", "torch_ref")
    assert (row["batch"], row["batch_layout"], row["groups"]) == (batch, batch_layout, groups)


def test_the_moe_example_file_is_grouped_points_whose_m_is_the_members_sum():
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples/shapes/moe-experts.yaml"
    rows = read_shapes(example)
    assert len(rows) == 4 and all(len(row.groups) == 8 for row in rows)
    assert all(row.m == sum(row.groups) and 0 in row.groups for row in rows)
    chosen = points([], rows, ["bf16"], ["transposedB"])
    assert {p.problem.n for p in chosen} == {14336, 4096} and len(chosen) == 4
