"""Batched problems (C[i] = A[i] @ B[i]) on the CPU: the record and its saved
form, the capability every plugin refuses unless it declares it, the batch
layouts' strides, the per-item reference, the matrix's batched cases, the
timing points and shapes files, the listing, and the cheating kernels caught
(in process, and through ``gemmreg check --batch``)."""

from __future__ import annotations

import subprocess
import sys

import gemmreg
import pytest
import torch
from fake_plugins.batched_cheats import SPECS
from gemmreg.checking import matrix
from gemmreg.checking.operands import make_operands
from gemmreg.checking.output_check import check_case
from gemmreg.contract.batching import BATCH_GAP
from gemmreg.contract.serialization import from_jsonable, to_jsonable
from gemmreg.contract.traffic import ideal_bytes
from gemmreg.discovery import registry
from gemmreg.timing import fresh_values
from gemmreg.timing.points import points
from gemmreg.timing.shape_files import read_shapes
from gemmreg_plugins import torch_ref

FIRST_ITEM, PACKED_STRIDE, SHARED_B, LOOP = SPECS
TORCH_REF = torch_ref.TORCH_REF


def batched(batch: int = 3, **fields) -> gemmreg.Problem:
    return gemmreg.Problem(m=17, n=19, k=23, batch=batch, **fields)


def test_a_problem_of_batch_one_is_saved_and_labelled_as_before():
    plain = gemmreg.Problem(m=17, n=19, k=23, dtype="bf16")
    assert plain.batch == 1 and plain.batch_layout == "packed"
    assert to_jsonable(plain) == {"m": 17, "n": 19, "k": 23, "dtype": "bf16", "layout": "rowmajor"}
    assert plain.label == "bf16-rowmajor-17x19x23"
    assert gemmreg.Problem(m=17, n=19, k=23, batch_layout="strided") == gemmreg.Problem(
        m=17, n=19, k=23
    )


def test_a_batched_problem_is_saved_labelled_and_counted_whole():
    packed = batched(8, dtype="bf16")
    strided = batched(8, dtype="bf16", batch_layout="strided")
    assert packed.label == "b8-bf16-rowmajor-17x19x23"
    assert strided.label == "b8strided-bf16-rowmajor-17x19x23"
    assert to_jsonable(strided)["batch"] == 8
    assert to_jsonable(strided)["batch_layout"] == "strided"
    assert from_jsonable(gemmreg.Problem, to_jsonable(strided)) == strided
    assert packed.flops == 8 * 2 * 17 * 19 * 23
    assert ideal_bytes(packed) == 8 * ideal_bytes(gemmreg.Problem(m=17, n=19, k=23, dtype="bf16"))


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"batch": 0}, "field 'batch': must be a positive integer"),
        ({"batch": 2, "dtype": "int8"}, "a batched problem is fp32, fp16, bf16, not int8"),
        ({"batch": 2, "batch_layout": "broadcast"}, "'broadcast' is not one of packed, strided"),
    ],
)
def test_a_batched_problem_that_cannot_be_is_refused(fields, words):
    with pytest.raises(gemmreg.SpecError, match=words):
        gemmreg.Problem(m=1, n=1, k=1, **fields)


def test_a_plugin_refuses_batched_problems_unless_it_declares_them():
    plain = gemmreg.Capabilities(precision={"fp32": gemmreg.Precision(math="ieee_fp32")})
    assert plain.batch_layouts == frozenset()
    assert plain.unsupported(batched()) == "batch 3: batched problems not declared"
    assert plain.unsupported(gemmreg.Problem(m=17, n=19, k=23)) is None
    packed_only = gemmreg.Capabilities(
        precision={"fp32": gemmreg.Precision(math="ieee_fp32")}, batch_layouts={"packed"}
    )
    assert packed_only.unsupported(batched()) is None
    assert packed_only.unsupported(batched(batch_layout="strided")) == (
        "batch layout strided not declared (declares packed)"
    )


def test_every_built_in_plugin_but_the_reference_refuses_a_batched_problem():
    found = registry.discover()
    takes = {
        name for name, kernel in found.kernels.items() if kernel.spec.capabilities.batch_layouts
    }
    assert takes == {"torch_ref"}
    refused = [
        kernel.spec.capabilities.unsupported(batched())
        for name, kernel in found.kernels.items()
        if name != "torch_ref"
    ]
    assert refused and all(reason for reason in refused)


@pytest.mark.parametrize("layout", gemmreg.LAYOUTS)
def test_a_strided_batch_puts_a_gap_of_nan_between_items(layout):
    packed = make_operands(TORCH_REF, batched(layout=layout), 5, "cpu", "normal")
    strided = make_operands(
        TORCH_REF, batched(layout=layout, batch_layout="strided"), 5, "cpu", "normal"
    )
    for x, y in zip(packed, strided, strict=True):
        assert torch.equal(x, y)  # the same values
        assert x.stride()[1:] == y.stride()[1:]  # each item laid out alike
        assert y.stride(0) == x.stride(0) + BATCH_GAP
        storage = torch.as_strided(y, (y.stride(0) * 3,), (1,))
        assert int(storage.isnan().sum()) >= 2 * BATCH_GAP  # the gaps hold NaN
    a, b = packed
    assert not torch.equal(a[0], a[1]) and not torch.equal(b[1], b[2])  # items differ


def test_the_reference_passes_and_the_cheats_fail_in_process():
    for problem in (batched(), batched(batch_layout="strided", layout="padded")):
        assert check_case(TORCH_REF, problem, 1, "normal").passed
        assert check_case(LOOP, problem, 1, "normal").passed
        for cheat in (FIRST_ITEM, SHARED_B):
            result = check_case(cheat, problem, 1, "normal")
            assert not result.passed and "in items 1, 2 of 3" in result.reason
    # a packed stride is right for a packed batch, and wrong for a strided one
    assert check_case(PACKED_STRIDE, batched(), 1, "normal").passed
    wrong = check_case(PACKED_STRIDE, batched(batch_layout="strided"), 1, "normal")
    assert not wrong.passed and "in items 1, 2 of 3" in wrong.reason


def test_a_check_that_names_no_batch_has_the_cases_it_had():
    assert matrix.build("quick", False) == matrix.build("quick", False, batches=(1,))
    both = matrix.build("quick", False, batches=(1, 3))
    only = matrix.build("quick", False, batches=(3,))
    assert both == matrix.build("quick", False) + only
    assert {c.problem.batch for c in only} == {3}
    assert {c.problem.batch_layout for c in only} == {"packed", "strided"}
    assert {c.problem.layout for c in only} == set(gemmreg.LAYOUTS)
    assert {c.problem.dtype for c in only} == set(gemmreg.DTYPES)
    ids = {c.id("k") for c in only}
    assert "k-b3-fp32-rowmajor-17x19x23" in ids and "k-b3strided-bf16-padded-17x19x23" in ids
    narrowed = matrix.build(
        "quick", False, ["fp16"], ["rowmajor"], batches=(2,), batch_layouts=["strided"]
    )
    assert [c.id("k") for c in narrowed] == [
        "k-b2strided-fp16-rowmajor-17x19x23",
        "k-b2strided-fp16-rowmajor-65x67x69",
    ]


def test_fresh_values_move_every_item_of_a_batch():
    a, b = (torch.arange(2 * 3 * 4.0).view(2, 3, 4), torch.arange(2 * 4 * 5.0).view(2, 4, 5))
    shifts = fresh_values.Shifts(rows=1, columns=2)
    moved = fresh_values.rotated((a, b), shifts)
    assert torch.equal(moved[0], torch.roll(a, 1, dims=1))
    assert torch.equal(moved[1], torch.roll(b, 2, dims=2))


def test_timing_points_and_a_shapes_files_batch_column(tmp_path):
    chosen = points([(64, 64, 64)], [], ["fp16"], ["rowmajor"], batch=(8, "strided"))
    assert [p.problem.label for p in chosen] == ["b8strided-fp16-rowmajor-64x64x64"]
    shapes = tmp_path / "shapes.csv"
    shapes.write_text("m,n,k,batch,batch_layout\n64,64,64,,\n64,64,64,4,\n64,64,64,4,strided\n")
    rows = read_shapes(shapes)
    labels = [p.problem.label for p in points([], rows, ["bf16"], ["rowmajor"])]
    assert labels == [
        "bf16-rowmajor-64x64x64",
        "b4-bf16-rowmajor-64x64x64",
        "b4strided-bf16-rowmajor-64x64x64",
    ]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("check", "--batch", "0"), "--batch: must be from 1 to 4096, got 0"),
        (("check", "--batch", "2,2"), "names a batch size twice"),
        (("check", "--batch-layout", "broadcast"), "unknown batch layout 'broadcast'"),
        (("compare", "torch_ref", "torch_ref_tf32", "--batch", "2,3"), "takes one batch size"),
        (
            ("bench", "torch_ref", "--shape", "64", "--batch-layout", "packed,strided"),
            "--batch-layout 'packed,strided': compare and bench take one",
        ),
        (
            ("bench", "torch_ref", "--shape", "64", "--dtype", "int8", "--batch", "2"),
            "a batched problem is fp32, fp16, bf16, not int8",
        ),
    ],
)
def test_bad_batch_options_are_refused_before_any_work(cli_offline, argv, words):
    done = cli_offline(*argv)
    assert done.code == 2 and words in done.err, done.err


def test_list_shows_which_kernels_take_batched_problems(capsys):
    from gemmreg import cli

    assert cli.main(["list"]) == 0
    rows = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(rows) if line.startswith("torch_ref "))
    assert "batched:" in rows[start + 2]
    start = next(i for i, line in enumerate(rows) if line.startswith("torch_ref_tf32 "))
    assert "batched" not in "".join(rows[start : start + 3])


@pytest.mark.slow
def test_gemmreg_check_fails_the_cheats(fake_plugins, tmp_path):
    fake_plugins("batched_cheats")
    cheats = ("fake_batched_first_item", "fake_batched_packed_stride", "fake_batched_shared_b")
    argv = [
        *(sys.executable, "-m", "gemmreg", "check", "torch_ref", "batched_loop", *cheats),
        *("--batch", "3", "--dtype", "fp32", "--verbose"),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if "b3" in line]
    for honest in ("torch_ref", "batched_loop"):
        mine = [line for line in rows if line.startswith(honest + " ")]
        assert len(mine) == 10 and all(" pass " in line for line in mine), rows
    for cheat in cheats:
        assert any(line.startswith(cheat) and "FAIL" in line for line in rows), rows
    strided = [line for line in rows if line.startswith(cheats[1]) and "b3strided" in line]
    assert strided and all("FAIL" in line for line in strided), rows


def test_the_legend_counts_a_batched_points_work_over_the_batch():
    """TFLOP/s and ideal GB/s of a batched point are over every item: the
    legend says so, and an unbatched point's legend reads as before."""
    import attrs
    from conftest import FIRST_PROTOCOL_SWEEP
    from gemmreg.reporting import compare_legend, runs

    _, (report, *_), _ = runs.load_run(FIRST_PROTOCOL_SWEEP)
    plain = "\n".join(compare_legend.legend(report))
    assert "TFLOP/s: 2MNK / median" in plain and "x batch" not in plain
    batched = attrs.evolve(report, problem=attrs.evolve(report.problem, batch=8))
    text = "\n".join(compare_legend.legend(batched))
    assert "TFLOP/s: 2MNK x batch / median" in text and "(MK + KN + MN) x batch" in text


def test_the_python_api_takes_the_batch_as_the_command_line_does(monkeypatch):
    """check, compare and bench hand their batch choices to the same requests
    as ``--batch`` and ``--batch-layout`` (the work is stubbed: what is asked
    is the point); a bad batch is one UsageError, before any work."""
    from gemmreg import api
    from gemmreg.commands import launching

    monkeypatch.setattr(launching, "answered", lambda work, save, request, progress: request)
    compared = api.compare(["a", "b"], "16x32x8", dtype="bf16", batch=4, batch_layout="strided")
    (problem,) = compared.problems(gpu=False)
    assert (problem.batch, problem.batch_layout, problem.label) == (
        4,
        "strided",
        "b4strided-bf16-rowmajor-16x32x8",
    )
    benched = api.bench(["a"], "16,32", dtypes="fp16", batch=3)
    assert [(p.problem.batch, p.problem.batch_layout) for p in benched.points] == [
        (3, "packed"),
        (3, "packed"),
    ]
    checked = api.check(["torch_ref"], batches=[1, 3], batch_layouts="strided")
    assert (checked.batches, checked.batch_layouts) == ((1, 3), ("strided",))
    assert api.compare(["a", "b"]).problems(gpu=False)[0].batch == 1  # unbatched by default
    for bad in (0, True, 10**9):
        with pytest.raises(gemmreg.UsageError, match="batch"):
            api.compare(["a", "b"], batch=bad)
    with pytest.raises(gemmreg.UsageError, match="batch_layout"):
        api.bench(["a"], "16", batch=2, batch_layout="diagonal")
