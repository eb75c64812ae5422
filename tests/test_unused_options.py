"""An option that would change nothing in the run asked for is refused in one
line, exit 2, before any work: a user who gives one believes it took effect.
In-process, with every way of starting work made to fail the test; the same
options where they do apply are taken."""

from __future__ import annotations

import pytest
from gemmreg import api
from gemmreg.commands import cli_points
from gemmreg.commands.cli_parser import build_parser
from gemmreg.contract.options import UsageError
from offline_cli import forbid_work, run_main

PAIR = ("compare", "torch_ref", "triton_baseline", "--shape", "8x8x8")


@pytest.fixture
def shapes(tmp_path):
    """A CSV shapes file of these rows (the first, its header)."""

    def write(*rows: str) -> str:
        path = tmp_path / "shapes.csv"
        path.write_text("\n".join(rows) + "\n")
        return str(path)

    return write


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((*PAIR, "--batch-layout", "strided"), "--batch-layout strided: no point is batched"),
        (("bench", "torch_ref", "--shape", "8", "--batch-layout", "packed"), "no point is batched"),
        (
            ("compare", "torch_ref", "triton_baseline", "--batch-layout", "strided"),
            "--batch-layout strided: no point is batched",
        ),
        ((*PAIR, "--out-dtype", "fp16"), "--out-dtype fp16: no point is fp8"),
        ((*PAIR, "--dtype", "fp32,int8", "--scaling", "rowwise"), "--scaling rowwise: no point"),
        (("bench", "torch_ref", "--shape", "8", "--out-dtype", "fp32"), "no point is fp8"),
        (("check", "torch_ref", "--out-dtype", "fp16"), "--out-dtype fp16: no case is fp8"),
        (("check", "torch_ref", "--dtype", "int8", "--scaling", "tensor"), "no case is fp8"),
        (("check", "torch_ref", "--batch-layout", "strided"), "no case is batched"),
        (("check", "torch_ref", "--batch", "1,3", "--dtype", "int8"), "--batch 3: no case is"),
        (("check", "torch_ref", "--grouped", "--dtype", "fp8e4m3"), "--grouped: no grouped case"),
        (("check", "torch_ref", "--force"), "--force replaces the run in --out; without --out"),
        ((*PAIR, "--force"), "--force replaces the run in --out; without --out nothing is saved"),
        (("bench", "torch_ref", "--shape", "8", "--force"), "bench saves into a new, empty"),
        ((*PAIR, "--repeats", "3", "--max-time", "1"), "--repeats and --max-time: one or the"),
        (("bench", "torch_ref", "--shape", "8", "--fail-on", "slower"), "--fail-on slower gates"),
        (("bench", "torch_ref", "--shape", "8", "--margin", "2"), "--margin judges a pair"),
        (("bench", "torch_ref", "--shape", "8", "--budget", "5"), "--budget adds processes"),
        ((*PAIR, "--l2", "dirty"), "--l2 dirty: this run is timed on the CPU"),
        (("bench", "torch_ref", "--shape", "8", "--device-processes", "3"), "timed on the CPU"),
    ],
)
def test_an_option_that_changes_nothing_is_refused(args, message, monkeypatch, capsys):
    forbid_work(monkeypatch)
    outcome = run_main(args, capsys)
    outcome.assert_refused()
    assert message in outcome.err


@pytest.mark.parametrize(
    ("rows", "options", "message"),
    [
        (("m,n,k,dtype", "8,8,8,fp16"), ("--dtype", "fp32"), "every row of --shapes names its"),
        (
            ("m,n,k,layout", "8,8,8,padded", "16,16,16,rowmajor"),
            ("--layout", "transposedA"),
            "every row of --shapes names its own layout",
        ),
        (("m,n,k,batch", "8,8,8,2"), ("--batch", "4"), "every row of --shapes names its own batch"),
        (
            ("m,n,k,dtype,out_dtype", "8,8,8,fp8e4m3,fp32", "8,8,8,fp16,"),
            ("--out-dtype", "bf16"),
            "--out-dtype bf16: no point is fp8, or each such row of --shapes names its own",
        ),
        (
            ("m,n,k,batch,batch_layout", "8,8,8,2,packed", "16,16,16,,"),
            ("--batch-layout", "strided"),
            "no point is batched, or each such row",
        ),
    ],
)
def test_an_option_every_row_of_a_shapes_file_overrides_is_refused(
    rows, options, message, shapes, monkeypatch, capsys
):
    forbid_work(monkeypatch)
    outcome = run_main(["bench", "torch_ref", "--shapes", shapes(*rows), *options], capsys)
    outcome.assert_refused()
    assert message in outcome.err


@pytest.mark.parametrize(
    "options",
    [
        ("--batch", "2", "--batch-layout", "strided"),
        ("--dtype", "fp8e4m3", "--out-dtype", "fp16", "--scaling", "rowwise"),
        ("--dtype", "fp32,fp8e5m2", "--out-dtype", "bf16"),  # the default, named: still used
        ("--groups", "0,3", "--shape", "8x8"),
        ("--repeats", "3", "--warmup", "1", "--margin", "2"),
    ],
)
def test_the_same_options_are_taken_where_they_apply(options):
    shape = () if "--shape" in options else ("--shape", "8x8x8")
    args = build_parser().parse_args([*PAIR[:3], *shape, *options])
    request = cli_points.compare_request(args)
    request.timing.check(str)  # both a pair's options
    args = build_parser().parse_args(["bench", "torch_ref", "triton_baseline", *shape, *options])
    assert cli_points.bench_request(args).points


def test_a_shapes_row_without_its_own_value_takes_the_option(shapes):
    file = shapes("m,n,k,dtype", "8,8,8,fp16", "16,16,16,")
    args = build_parser().parse_args(["bench", "torch_ref", "--shapes", file, "--dtype", "bf16"])
    dtypes = [p.problem.dtype for p in cli_points.bench_request(args).points]
    assert dtypes == ["fp16", "bf16"]


def test_the_python_api_refuses_them_too_in_its_keywords():
    with pytest.raises(UsageError, match=r"^out_dtypes fp16: no case is fp8"):
        api.check(["torch_ref"], out_dtypes=["fp16"])
    with pytest.raises(UsageError, match=r"^force replaces the run in out; without out"):
        api.check(["torch_ref"], force=True)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"out_dtype": "fp16"}, "out_dtype 'fp16': no point is fp8"),
        ({"scaling": "rowwise"}, "scaling 'rowwise': no point is fp8"),
        ({"batch_layout": "strided"}, "batch_layout 'strided': no point is batched"),
    ],
)
def test_the_python_api_s_compare_and_bench_refuse_unused_problem_keywords(
    keywords, message, monkeypatch
):
    forbid_work(monkeypatch)
    with pytest.raises(UsageError, match=f"^{message}; drop it"):
        api.compare(["torch_ref", "triton_grouped"], "8", **keywords)
    with pytest.raises(UsageError, match=f"^{message}; drop it"):
        api.bench(["torch_ref"], "8,16", **keywords)


def test_the_api_s_problem_keyword_check_builds_no_problem_of_its_own(monkeypatch):
    """It reads the dtypes and batch sizes: a Problem built for it refused an
    fp8 batch as a SpecError, ahead of the one-line UsageError the call owes."""
    forbid_work(monkeypatch)
    with pytest.raises(UsageError, match="a batched problem is fp32, fp16, bf16"):
        api.compare(["torch_ref", "torch_ref_fp8"], "16x16x16", dtype="fp8e4m3", batch=2)
