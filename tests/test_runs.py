"""Comparisons that survive faults, saved runs, regressions and plots."""

from __future__ import annotations

import json
import re

import attrs
import pytest
from conftest import FIRST_PROTOCOL_SWEEP, HANG_LIMIT_S, REPO, only_extra_plugins, run_gemmreg
from gemmreg.cli import UsageError, parse_shapes
from gemmreg.contract.records import Problem
from gemmreg.discovery.registry import discover
from gemmreg.reporting import regression, render_compare, runs
from gemmreg.timing import comparing
from gemmreg.timing.comparing import CompareReport, KernelSummary


@pytest.fixture(scope="module")
def faulty_report():
    with only_extra_plugins(["fake_plugins.good", "fake_plugins.misbehaving"]):
        kernels = discover().select(["fake_good", "fake_segfault", "fake_hang", "fake_raises"])
        return comparing.run_compare(
            kernels,
            Problem(m=32, n=32, k=32),
            processes=2,
            seed=1,
            clock="test",
            device_name="cpu",
            gpu=False,
            repeats=5,
            # Three times the usual limit: the good kernel's task must finish
            # within it, and once (under a load average near 100 on two cores:
            # three test runs at once) it did not in 4 s. One hang waits it out.
            task_timeout=3 * HANG_LIMIT_S,
        )


def test_a_crash_a_hang_and_an_exception_each_get_a_row_and_the_good_kernel_is_timed(faulty_report):
    status = {s.kernel: s for s in faulty_report.summaries}
    assert status["fake_good"].status == "timed"
    assert len(status["fake_good"].process_medians_ms) == 2
    assert (
        status["fake_segfault"].status == "crashed" and "SIGSEGV" in status["fake_segfault"].reason
    )
    assert status["fake_hang"].status == "timeout"
    assert (
        status["fake_raises"].status == "error"
        and "invalid configuration" in status["fake_raises"].reason
    )
    verdicts = {(v.baseline, v.kernel): v.verdict for v in faulty_report.verdicts}
    assert verdicts[("fake_good", "fake_segfault")] == "no verdict"


def test_a_kernel_that_hangs_in_the_rounds_costs_one_timeout_not_one_per_process():
    """A hang that cannot be pinned on one kernel's prepare ends the timing:
    the later processes are skipped with the reason, instead of each waiting
    out its own timeout."""
    with only_extra_plugins(["fake_plugins.good", "fake_plugins.misbehaving"]):
        kernels = discover().select(["fake_good", "fake_hangs_while_timed"])
        report = comparing.run_compare(
            kernels,
            Problem(m=8, n=8, k=8),
            processes=2,  # each process is a worker: the second is the one skipped
            seed=1,
            clock="test",
            device_name="cpu",
            gpu=False,
            repeats=3,
            task_timeout=HANG_LIMIT_S,
            cold=False,
        )
    statuses = [(r.process, r.status) for r in report.runs if r.kernel == "fake_good"]
    assert statuses == [(0, "timeout"), (1, "skipped")]
    skipped = [r for r in report.runs if r.status == "skipped"]
    assert all("an earlier process timed out" in r.reason for r in skipped)
    assert {v.verdict for v in report.verdicts} == {"no verdict"}


def test_an_interrupted_comparison_keeps_what_finished(fake_plugins):
    fake_plugins("good")
    kernels = discover(env={"GEMMREG_PLUGINS": "torch_ref"}, extra_plugins=["fake_plugins.good"])
    seen = []

    def interrupt_after_first(run):
        seen.append(run)
        raise KeyboardInterrupt

    report = comparing.run_compare(
        kernels.select(["torch_ref", "fake_good"]),
        Problem(m=16, n=16, k=16),
        processes=2,  # the interrupt comes in the first: the second never runs
        seed=1,
        clock="test",
        device_name="cpu",
        gpu=False,
        repeats=3,
        on_run=interrupt_after_first,
        cold=False,  # cold starts (a worker each) are not what is interrupted here
    )
    assert report.partial
    # The first process's two rows finished; the interrupt came while they were handed over.
    assert report.runs and report.runs[0].round_ms
    assert {v.verdict for v in report.verdicts} == {"no verdict"}


def summary(name, medians):
    medians = list(medians)
    return KernelSummary(
        kernel=name,
        package="p",
        precision="ieee_fp32",
        math="ieee_fp32",
        generator="g",
        status="timed",
        process_medians_ms=tuple(medians),
        center_ms=sorted(medians)[len(medians) // 2],
        low_ms=min(medians),
        high_ms=max(medians),
        tflops=1.0,
    )


def report(medians, shape=(64, 64, 64)):
    problem = Problem(m=shape[0], n=shape[1], k=shape[2])
    return CompareReport(
        problem=problem,
        processes=3,
        seed=1,
        clock="test",
        device_name="cpu",
        summaries=(summary("k", medians),),
        verdicts=(),
        runs=(),
    )


def test_a_saved_run_reads_back_identically(tmp_path, faulty_report):
    """The faulty comparison above, as it came: a timed kernel with its rounds
    and cold start, and crashed, hung and failing rows with their reasons."""
    original = faulty_report
    assert {s.status for s in original.summaries} == {"timed", "crashed", "timeout", "error"}
    assert original.cold and original.records and original.runs
    views = render_compare.run_views([original], partial=False)
    runs.write_run(tmp_path, {"device_name": "cpu"}, [original], partial=False, views=views)
    manifest, loaded, partial = runs.load_run(tmp_path)
    assert loaded == [original] and manifest == {"device_name": "cpu"} and not partial
    assert (tmp_path / "summary.csv").read_text().startswith("m,n,k,dtype")


def test_a_real_slowdown_beyond_the_threshold_is_a_regression():
    before, after = [report([1.0, 1.01, 0.99])], [report([1.2, 1.21, 1.19])]
    (change,) = regression.compare_runs(before, after, threshold_pct=5)
    assert change.verdict == "slower" and change.regression
    assert change.change_pct == pytest.approx(20, rel=0.01)
    tight = [report([1.0, 1.001, 0.999])]
    (small,) = regression.compare_runs(tight, [report([1.03, 1.031, 1.029])], threshold_pct=5)
    assert small.verdict == "slower" and not small.regression  # real, but under 5%
    (unresolved,) = regression.compare_runs(before, [report([1.03, 1.031, 1.029])], 5)
    assert unresolved.verdict == "noisy"  # 3 processes with a 2% spread cannot tell 3%
    (same,) = regression.compare_runs(before, [report([1.0, 1.01, 0.99])], threshold_pct=5)
    assert same.verdict == "equivalent" and not same.regression


def test_a_noisy_run_gets_a_warning_not_a_verdict():
    """Two identical CPU runs once gave "+44% SLOWER REGRESSION" with one
    process range of 0.005-12.9 ms: such a run cannot resolve 5%."""
    before = [report([0.005, 0.006, 12.9])]
    (change,) = regression.compare_runs(before, [report([0.005, 0.0061, 0.0062])], 5)
    assert change.verdict == "noisy" and not change.regression
    assert "too noisy" in change.explanation


def test_a_partial_point_gets_no_verdict():
    partial = attrs.evolve(report([1.2, 1.21, 1.19]), partial=True)
    (change,) = regression.compare_runs([report([1.0, 1.01, 0.99])], [partial], 5)
    assert change.verdict == "no verdict" and not change.regression
    two_of_three = attrs.evolve(report([1.2, 1.21, 1.19]), summaries=(summary("k", [1.2, 1.21]),))
    (change,) = regression.compare_runs([report([1.0, 1.01, 0.99])], [two_of_three], 5)
    assert change.verdict == "no verdict"


def test_two_runs_of_unlike_precision_say_so(tmp_path):
    before = report([1.0, 1.01, 0.99])
    tf32 = attrs.evolve(before.summaries[0], math="tf32", precision="tf32 (tl.dot default)")
    after = attrs.evolve(before, summaries=(tf32,))
    runs.write_run(tmp_path / "ieee", {}, [before], partial=False)
    runs.write_run(tmp_path / "tf32", {}, [after], partial=False)
    done = run_gemmreg("report", str(tmp_path / "ieee"), str(tmp_path / "tf32"))
    assert "UNLIKE PRECISION" in done.stdout


def test_report_exits_1_on_a_regression_and_2_on_a_bad_run(tmp_path):
    runs.write_run(tmp_path / "before", {}, [report([1.0, 1.01, 0.99])], partial=False)
    runs.write_run(tmp_path / "after", {}, [report([1.5, 1.51, 1.49])], partial=False)
    done = run_gemmreg("report", str(tmp_path / "before"), str(tmp_path / "after"))
    assert done.returncode == 1 and "REGRESSION" in done.stdout
    same = run_gemmreg("report", str(tmp_path / "before"), str(tmp_path / "before"))
    assert same.returncode == 0
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "run.json").write_text("{")
    bad = run_gemmreg("report", str(tmp_path / "broken"))
    assert bad.returncode == 2 and "not a readable gemmreg run" in bad.stderr


def test_plots_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    from gemmreg.reporting import plots

    reports = [report([1.0, 1.1, 0.9], (n, n, n)) for n in (64, 128, 256)]
    written = plots.write_plots(tmp_path, reports, {"device_name": "NVIDIA H200"})
    assert {p.name for p in written} == {"sweep-fp32.png", "sweep-fp32.svg"}
    assert all(p.stat().st_size > 1000 for p in written)


@pytest.mark.parametrize(
    ("text", "shapes"),
    [
        ("512", [(512, 512, 512)]),
        ("256:1024:256", [(256,) * 3, (512,) * 3, (768,) * 3, (1024,) * 3]),
        ("16x32x64,128", [(16, 32, 64), (128, 128, 128)]),
    ],
)
def test_sweep_shapes_parse(text, shapes):
    assert parse_shapes(text) == shapes


@pytest.mark.parametrize("text", ["256:128:64", "1:2", "a:b:c", "0", "12x"])
def test_bad_sweep_shapes_are_refused(text):
    with pytest.raises(UsageError):
        parse_shapes(text)


def test_bench_writes_a_run_that_report_reads(tmp_path):
    out = tmp_path / "sweep"
    done = run_gemmreg(
        "bench",
        "torch_ref",
        "--shape",
        "8,16",
        "--dtype",
        "fp32,fp16",
        "--processes",
        "1",  # the sweep's bookkeeping is the point; each process is a worker
        "--repeats",
        "3",
        "--out",
        str(out),
        # Workers started before the plugins are read, as on a GPU machine: a
        # pool of the CPU's default size, cut to the one process asked for.
        env={"GEMMREG_START_AHEAD": "1", "GEMMREG_TRACE": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.index("starting workers ahead") < done.stderr.index("[1/4]")
    data = json.loads((out / "run.json").read_text())
    assert [r["problem"]["m"] for r in data["reports"]] == [8, 16, 8, 16]
    assert data["partial"] is False
    assert len((out / "summary.csv").read_text().splitlines()) == 5
    shown = run_gemmreg("report", str(out), "--format", "csv")
    assert shown.returncode == 0 and shown.stdout.count("torch_ref") == 4


def test_the_commit_given_by_the_caller_wins_over_a_stale_checkout(monkeypatch, tmp_path):
    """A GPU machine's copy of the tree may carry an old .git: the commit the
    caller names is the one recorded, and says where it came from."""
    from gemmreg.instruments import environment

    monkeypatch.setenv(environment.COMMIT_ENV, "abc1234")
    assert environment.git_record() == {"commit": "abc1234", "source": "GEMMREG_GIT_COMMIT"}
    monkeypatch.delenv(environment.COMMIT_ENV)
    assert environment.git_record()["commit"] not in ("abc1234", "unknown")  # this checkout


def test_a_sweep_report_ends_with_every_verdict_on_one_line_each():
    """The H200 sweep of triton_tuned against torch_ref, read back: one line
    per point, each with the verdict its own table gives."""
    from gemmreg.reporting import render_compare, runs

    _, reports, _ = runs.load_run(FIRST_PROTOCOL_SWEEP)
    lines = render_compare.verdict_table(reports, "table").splitlines()[2:]
    assert len(lines) == len(reports) == 8
    for line, report in zip(lines, reports, strict=True):
        (verdict,) = report.verdicts
        assert line.startswith(f"{report.problem.shape} ")
        assert verdict.verdict.upper() in line and "triton_tuned vs torch_ref" in line
    mean = (  # saved before verdicts kept their intervals by regime: the mean has none
        "geometric-mean speedup: triton_tuned vs torch_ref: 0.9859x "
        "(8 points; no interval: none at 8 of them)"
    )
    shown = run_gemmreg("report", str(FIRST_PROTOCOL_SWEEP))
    # As bench printed it: the verdicts, then the mean over the points.
    assert shown.returncode == 0 and shown.stdout.rstrip().endswith(f"{lines[-1]}\n\n{mean}")
    only = run_gemmreg("report", str(FIRST_PROTOCOL_SWEEP), "--verdicts")
    assert only.returncode == 0 and only.stdout.splitlines()[2:] == [*lines, "", mean]


def test_report_margin_judges_a_saved_run_again_from_its_processes():
    """The H200 A/A sweep in which one kernel under two names read FASTER
    1.0005x (4096^3 fp32, interval 1.0001-1.001), saved under the rule that
    put significance before equivalence: judged again with today's rule it is
    EQUIVALENT at the default margin, and a margin below the difference
    makes it a claim again."""
    aa = REPO / "evidence" / "2026-11-30-h200-verdict-evidence" / "aabench-4"
    recorded = run_gemmreg("report", str(aa), "--verdicts")
    row = next(line for line in recorded.stdout.splitlines() if "4096x4096x4096  fp32" in line)
    assert "FASTER" in row
    again = run_gemmreg("report", str(aa), "--verdicts", "--margin", "1")
    assert again.returncode == 0 and "judged again" in again.stderr
    row = next(line for line in again.stdout.splitlines() if "4096x4096x4096  fp32" in line)
    assert "EQUIVALENT" in row and "FASTER" not in again.stdout and "SLOWER" not in again.stdout
    tight = run_gemmreg("report", str(aa), "--verdicts", "--margin", "0.01")
    row = next(line for line in tight.stdout.splitlines() if "4096x4096x4096  fp32" in line)
    assert "FASTER" in row


def test_report_margin_keeps_the_verdicts_of_a_run_without_process_records():
    old = str(FIRST_PROTOCOL_SWEEP)
    again = run_gemmreg("report", old, "--verdicts", "--margin", "1")
    assert again.returncode == 0 and "not judged again" in again.stdout
    both = run_gemmreg("report", old, old, "--margin", "1")
    assert both.returncode == 2 and "one run" in both.stderr


@pytest.mark.parametrize(("suffix", "kind"), [(".gz", "gzip"), (".xz", "xz")])
def test_a_run_kept_packed_reads_like_the_plain_one(tmp_path, suffix, kind):
    """Committed evidence keeps run.json packed (it is mostly raw samples):
    gzip, or xz, which packs it tighter."""
    import gzip
    import lzma

    pack = {".gz": gzip.compress, ".xz": lzma.compress}[suffix]
    runs.write_run(tmp_path / "plain", {"device_name": "cpu"}, [report([1.0, 1.01, 0.99])], False)
    packed = tmp_path / "packed"
    packed.mkdir()
    raw = (tmp_path / "plain" / "run.json").read_bytes()
    (packed / f"run.json{suffix}").write_bytes(pack(raw))
    assert runs.load_run(packed) == runs.load_run(tmp_path / "plain")
    (packed / f"run.json{suffix}").write_bytes(b"not packed")
    with pytest.raises(
        runs.RunError, match=re.escape(f"run.json{suffix} is not a readable {kind} file")
    ):
        runs.load_run(packed)


def test_a_plain_run_is_read_before_a_packed_one(tmp_path):
    """``run.json`` first, then ``.gz``, then ``.xz``: the first that exists
    is the run, whatever lies beside it."""
    import lzma

    runs.write_run(tmp_path, {"device_name": "cpu"}, [report([1.0, 1.01, 0.99])], False)
    plain = runs.load_run(tmp_path)
    (tmp_path / "run.json.xz").write_bytes(b"not packed")
    assert runs.load_run(tmp_path) == plain
    (tmp_path / "run.json.xz").write_bytes(lzma.compress((tmp_path / "run.json").read_bytes()))
    (tmp_path / "run.json").unlink()
    assert runs.load_run(tmp_path) == plain
