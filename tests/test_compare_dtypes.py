"""``compare --dtype fp32,fp16``: one shape, the pair judged at each dtype in
turn, all in one run: a comparison per dtype handed to the executor, every
dtype's verdict printed, saved and gated by ``--fail-on``. The executor
here answers each comparison with a recorded H200 report moved to the
point asked (FASTER at fp32, SLOWER at the others), so no kernel runs."""

from __future__ import annotations

import json

import attrs
import pytest
from conftest import REPO
from gemmreg.commands import cli_points, compare_command
from gemmreg.contract.options import UsageError
from gemmreg.fanout import executors
from gemmreg.fanout.executors import Checked, CheckJob, Compared, CompareJob, SweepJob
from gemmreg.reporting import runs
from gemmreg.workers.devices import Device
from offline_cli import forbid_work, run_main

RECORDED = (
    REPO / "evidence" / "2026-11-30-h200-verdict-calibration" / "run-a" / "g0" / "knownbench-1"
)
AHEAD = "workers started ahead"
"""What the command hands its executor as the workers it started ahead."""
PAIR = ("compare", "torch_ref", "triton_baseline", "--shape", "8x16x8")


@attrs.define
class Recorded:
    """Each comparison answered from the recorded run, at the job's point:
    its pair FASTER at fp32, SLOWER (as recorded) at the other dtypes."""

    problems: list[str] = attrs.field(factory=list)
    ahead: list[object] = attrs.field(factory=list)

    @property
    def gpus(self) -> tuple[Device, ...]:
        return ()

    def compare(self, job: CompareJob) -> Compared:
        manifest, reports, _ = runs.load_run(RECORDED)
        report = attrs.evolve(reports[0], problem=job.problem)
        if job.problem.dtype == "fp32":
            faster = [attrs.evolve(v, verdict="faster") for v in report.verdicts]
            report = attrs.evolve(report, verdicts=tuple(faster))
        self.problems.append(job.problem.label)
        self.ahead.append(job.ahead)
        return report, {**manifest, "gpu_state_after": {"comparison": len(self.problems)}}

    def sweep(self, job: SweepJob) -> object:
        raise AssertionError("compare is no sweep")

    def check(self, job: CheckJob) -> Checked:
        raise AssertionError("compare checks nothing")


@pytest.fixture
def compare_on_record(monkeypatch, capsys, tmp_path):
    """``compare``'s command line, its comparisons the recorded executor's."""
    monkeypatch.chdir(tmp_path)
    forbid_work(monkeypatch)
    mine = Recorded()
    monkeypatch.setattr(executors, "built_in", lambda ray, chosen: mine)
    monkeypatch.setattr(compare_command, "start_ahead", lambda *a: AHEAD)
    return mine, lambda *argv: run_main([*PAIR, *argv], capsys)


def test_each_dtype_is_a_comparison_of_its_own_in_one_saved_run(compare_on_record, tmp_path):
    mine, main = compare_on_record
    outcome = main("--dtype", "fp32,fp16", "--out", "run")
    assert outcome.code == 0, outcome.err
    assert mine.problems == ["fp32-rowmajor-8x16x8", "fp16-rowmajor-8x16x8"]
    assert mine.ahead == [AHEAD, None]  # workers started ahead serve the first comparison
    timing = [line for line in outcome.err.splitlines() if "timing torch_ref" in line]
    assert [line.split(" at ")[1].split(" on ")[0] for line in timing] == [
        "8x16x8 fp32 rowmajor",
        "8x16x8 fp16 rowmajor",
    ]
    assert timing[0].startswith("[1/2] ") and timing[1].startswith("[2/2] ")
    # Every dtype's verdict line, then the run's verdicts a line each.
    verdicts = [line for line in outcome.out.splitlines() if line.startswith("verdict: ")]
    assert [v.split(": ")[2].split(" ")[0] for v in verdicts] == ["FASTER", "SLOWER"]
    listed = [
        r.split() for r in outcome.out.splitlines() if r.startswith("8x16x8 ") and " vs " in r
    ]
    assert [(row[1], row[-1]) for row in listed] == [("fp32", "FASTER"), ("fp16", "SLOWER")]
    manifest, saved, partial = runs.load_run(tmp_path / "run")
    assert not partial and [r.problem.dtype for r in saved] == ["fp32", "fp16"]
    assert manifest["gpu_state_after"] == {"comparison": 2}  # after the last comparison


def test_fail_on_covers_every_dtype(compare_on_record):
    _, main = compare_on_record
    outcome = main("--dtype", "fp32,fp16", "--fail-on", "slower")
    assert outcome.code == 1
    gate = [line for line in outcome.err.splitlines() if "--fail-on" in line]
    assert gate == [
        "gemmreg: --fail-on slower: 1 pair: mm_extra_pass vs torch_ref at "
        "fp16-rowmajor-8x16x8: SLOWER 0.9584x"
    ]
    assert main("--dtype", "fp32", "--fail-on", "slower").code == 0  # FASTER alone passes


def test_one_dtype_prints_one_comparison_as_before(compare_on_record):
    mine, main = compare_on_record
    outcome = main("--dtype", "fp16", "--format", "json")
    assert outcome.code == 0, outcome.err
    assert mine.problems == ["fp16-rowmajor-8x16x8"]
    assert json.loads(outcome.out)["kind"] == "gemmreg.compare"
    assert "timing torch_ref, triton_baseline at 8x16x8 fp16" in outcome.err
    assert "[1/1]" not in outcome.err


def test_several_dtypes_in_json_are_the_run_as_saved(compare_on_record):
    _, main = compare_on_record
    outcome = main("--dtype", "fp16,fp32", "--format", "json")
    document = json.loads(outcome.out)
    assert document["kind"] == "gemmreg.run"
    assert [r["problem"]["dtype"] for r in document["reports"]] == ["fp16", "fp32"]


@pytest.mark.parametrize(
    ("dtypes", "says"),
    [
        ("fp32,,fp16", "--dtype 'fp32,,fp16' names an empty dtype"),
        ("fp32,fp32", "--dtype 'fp32,fp32' names a dtype twice"),
        ("fp32,fp9", "unknown dtype 'fp9'"),
        # Every dtype's pair must be able to run, as one dtype's always had to.
        ("fp32,bf16", "compare needs two plugins that can run here"),
    ],
)
def test_a_bad_dtype_list_is_one_line_before_any_work(cli_offline, dtypes, says):
    outcome = cli_offline(*PAIR, "--dtype", dtypes)
    outcome.assert_refused()
    assert says in outcome.err


def test_a_shapes_row_without_a_dtype_is_timed_at_each_with_its_weight(tmp_path):
    shapes = tmp_path / "one.csv"
    shapes.write_text("m,n,k,weight\n8,16,8,3\n")
    args = _parsed("--shapes", str(shapes), "--dtype", "fp16,fp32")
    request = cli_points.compare_request(args)
    assert (request.shape, request.dtypes, request.weights) == (
        (8, 16, 8),
        ("fp16", "fp32"),
        (3, 3),
    )
    assert [p.label for p in request.problems(gpu=False)] == [
        "fp16-rowmajor-8x16x8",
        "fp32-rowmajor-8x16x8",
    ]


def test_fp8_and_other_dtypes_share_a_compare_each_with_its_own_output(tmp_path):
    """fp8's output dtype and scaling go to its point only; the others keep theirs."""
    args = _parsed(
        "--shape", "32x32x32", "--dtype", "fp8e4m3,bf16", "--out-dtype", "fp32",
        "--scaling", "rowwise",
    )  # fmt: skip
    problems = cli_points.compare_request(args).problems(gpu=False)
    assert [p.number_format for p in problems] == ["fp8e4m3-fp32-rowwise", "bf16"]
    assert [p.out_dtype for p in problems] == ["fp32", "bf16"]


def test_fp8_rows_with_two_outputs_are_sent_to_bench(tmp_path):
    shapes = tmp_path / "two.csv"
    shapes.write_text("m,n,k,dtype,out_dtype\n32,32,32,fp8e4m3,bf16\n32,32,32,fp8e5m2,fp32\n")
    with pytest.raises(UsageError, match=r"one output dtype and scaling .* use bench"):
        cli_points.compare_request(_parsed("--shapes", str(shapes)))


def _parsed(*argv: str) -> object:
    from gemmreg import cli

    return cli.build_parser().parse_args(["compare", "torch_ref", "triton_baseline", *argv])


def test_the_runs_manifest_is_the_first_comparisons_with_what_came_after():
    first = {"timestamp_utc": "first", "gpu_state_after": "1", "ray_nodes": [{"node": "a"}]}
    second = {"timestamp_utc": "second", "gpu_state_after": "2", "ray_nodes": [{"node": "a"}]}
    third = {"timestamp_utc": "third", "gpu_state_after": "3", "ray_nodes": [{"node": "b"}]}
    assert compare_command.merged([first, second, third]) == {
        "timestamp_utc": "first",
        "gpu_state_after": "3",
        "ray_nodes": [{"node": "a"}, {"node": "b"}],
    }
    assert compare_command.merged([first]) == first


def test_nothing_timed_names_each_point_that_timed_nothing():
    from gemmreg.commands.results import CompareResult

    _, (report, _), _ = runs.load_run(RECORDED)
    skipped = tuple(
        attrs.evolve(s, status="skipped", reason="fp16 is not supported\nmore")
        for s in report.summaries
    )
    at_fp16 = attrs.evolve(report, problem=attrs.evolve(report.problem, dtype="fp16"))
    at_fp16 = attrs.evolve(at_fp16, summaries=skipped)
    assert CompareResult(reports=(report,)).nothing_timed == ""
    why = "torch_ref: skipped: fp16 is not supported; mm_extra_pass: skipped: fp16 is not supported"
    assert CompareResult(reports=(at_fp16,)).nothing_timed == why
    assert CompareResult(reports=(report, at_fp16)).nothing_timed == (
        f"at fp16-rowmajor-8192x8192x8192: {why}"
    )
    assert CompareResult(reports=(report, at_fp16), partial=True).nothing_timed == ""
