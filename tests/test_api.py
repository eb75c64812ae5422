"""The Python API (``gemmreg.compare``, ``bench``, ``check``, ``load_run``):
docs/api.md's example run as a user would run it and every part of its
answer read back; bad input refused with ``gemmreg.UsageError`` before any
work; and the command line a thin client, handing the same request to the
same code."""

from __future__ import annotations

import contextlib
import inspect
import io
import re
import subprocess
import sys

import attrs
import gemmreg
import pytest
from conftest import REPO
from gemmreg import cli
from gemmreg.commands import bench_command, check_command, compare_command
from gemmreg.reporting import run_folder
from gemmreg.timing import stats
from gemmreg.timing.timing_records import CompareReport
from offline_cli import Handed, forbid_work, hand_over, run_main

API_PAGE = REPO / "docs" / "api.md"
WORDS = {"faster", "slower", "equivalent", "inconclusive"}
"""The words a pair of kernels that both ran (under one execution) can get."""


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """docs/api.md's example, run once in a fresh folder (its sweep saves
    under runs/ there): its variables and what it printed, for the tests
    below, each of which reads its part. It times, sweeps and checks in
    worker processes, most of a minute on two cores: once for all of them."""
    (code,) = re.findall(r"```python\n(.*?)```", API_PAGE.read_text(), re.S)
    namespace: dict = {}
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(printed):
        mp.chdir(tmp_path_factory.mktemp("api-example"))
        exec(compile(code, str(API_PAGE), "exec"), namespace)
    namespace["printed"] = printed.getvalue()
    return namespace


def test_compare_returns_the_verdict_and_the_figures_of_each_kernel(example):
    result, verdict = example["result"], example["verdict"]
    assert isinstance(result, gemmreg.CompareResult) and isinstance(result.report, CompareReport)
    assert (verdict.baseline, verdict.kernel) == ("triton_baseline", "triton_grouped")
    assert verdict.verdict in WORDS, verdict  # both interpreted here: a pair like any other
    low, high = verdict.interval
    assert 0 < low <= verdict.speedup <= high
    # an EQUIVALENT found by two one-sided tests carries their interval's level
    # (which pair that is depends on the CPU's timing noise, never on the API)
    level = result.report.confidence
    if "two one-sided tests" in verdict.explanation:
        level = stats.equivalence_confidence(level)
    assert verdict.confidence == level and verdict.processes == 3
    assert verdict.explanation and verdict.explanation in example["printed"]
    assert result.verdicts == (verdict,) and result.verdict("triton_grouped", "triton_baseline")
    for name in ("triton_baseline", "triton_grouped"):
        summary = result.kernel(name)
        assert summary.status == "timed" and len(summary.process_medians_ms) == 3
        assert summary.low_ms <= summary.center_ms <= summary.high_ms
    assert "verdict: triton_grouped vs triton_baseline:" in result.table()
    assert not (result.failed or result.partial or result.nothing_timed)
    assert result.out is None  # compare saves only where asked
    command = result.manifest["command"]
    assert command.startswith("gemmreg.compare(['triton_baseline', 'triton_grouped'], ")
    assert "repeats=5" in command
    with pytest.raises(KeyError, match="triton_grouped vs triton_baseline"):
        result.verdict("triton_baseline")


def test_bench_times_every_shape_and_saves_the_run(example):
    sweep = example["sweep"]
    assert isinstance(sweep, gemmreg.BenchResult)
    assert [r.problem.shape for r in sweep.reports] == ["16x16x16", "32x32x32"]
    assert all(s.status == "timed" for r in sweep.reports for s in r.summaries)
    assert sweep.point("32x32x32", "fp32").problem.m == 32
    assert sweep.out.parent.name == "runs" and (sweep.out / "run.json").is_file()
    assert sweep.manifest["shapes"] == "16,32" and not sweep.partial and not sweep.not_saved


def test_load_run_reads_the_records_report_reads(example, capsys):
    saved, sweep = example["saved"], example["sweep"]
    assert isinstance(saved, gemmreg.Run) and saved.out == sweep.out and not saved.partial
    assert [r.problem for r in saved.reports] == [r.problem for r in sweep.reports]
    figures = [[s.center_ms for s in r.summaries] for r in saved.reports]
    assert figures == [[s.center_ms for s in r.summaries] for r in sweep.reports]
    done = run_main(["report", str(saved.out)], capsys)
    assert done.code == 0 and done.out == saved.table() + "\n"


def test_check_runs_the_matrix_on_one_plugin(example):
    checked = example["checked"]
    assert isinstance(checked, gemmreg.CheckResult)
    assert checked.passed and checked.kernels == ("torch_ref",) and not checked.failures
    ran = [c for c in checked.cases if c.status != "skip"]
    assert ran and {c.kernel for c in checked.cases} == {"torch_ref"}
    assert {(c.problem.dtype, c.problem.layout) for c in ran if c.kind == "values"} == {
        ("fp32", "rowmajor")
    }
    assert checked.counts["pass"] == len(ran)


def test_the_example_s_bad_input_is_one_line(example):
    assert "compare needs at least two plugins\n" in example["printed"]


PAIR = ["torch_ref", "triton_grouped"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gemmreg.compare("torch_ref"), "compare takes a list of plugin names"),
        (lambda: gemmreg.compare(["torch_ref", "nope"]), "unknown plugin 'nope'"),
        (lambda: gemmreg.compare(PAIR, shape="12x"), "malformed shape '12x'"),
        (lambda: gemmreg.compare(PAIR, shape=(0, 4, 4)), "every dimension must be at least 1"),
        (lambda: gemmreg.compare(PAIR, processes=0), "processes: must be from 1 to 64, got 0"),
        (lambda: gemmreg.compare(PAIR, processes="3"), "processes: expected an integer"),
        (lambda: gemmreg.compare(PAIR, processes=3, budget=30), "processes and budget: one or"),
        (lambda: gemmreg.compare(PAIR, margin=float("nan")), "margin: must be a finite number"),
        (lambda: gemmreg.compare(PAIR, timeout=-1), "timeout: must be above 0 up to 86400"),
        (lambda: gemmreg.compare(PAIR, timeout=3e6), "timeout: must be above 0 up to 86400"),
        (lambda: gemmreg.check(timeout=float("inf")), "timeout: must be a finite number"),
        (lambda: gemmreg.compare(PAIR, dtype="fp8"), "unknown dtype 'fp8'"),
        (lambda: gemmreg.compare(PAIR, dtype="fp32,fp16"), "compare takes one dtype"),
        (
            lambda: gemmreg.compare(PAIR, shape=(100_000_000, 100_000_000, 1)),
            "refused before any worker started",
        ),
        (lambda: gemmreg.bench(["torch_ref"], shapes="9:3:1"), "malformed range '9:3:1'"),
        (lambda: gemmreg.bench(["torch_ref"], shapes=[]), "bench needs a list of shapes"),
        (lambda: gemmreg.check(["nope"]), "unknown plugin 'nope'"),
        (lambda: gemmreg.check(dtypes=""), "dtypes '' names an empty dtype"),
        (lambda: gemmreg.load_run("no-such-run"), "no-such-run: no such run directory"),
    ],
)
def test_bad_input_raises_usage_error_in_one_line_before_any_work(
    call, message, monkeypatch, tmp_path
):
    monkeypatch.chdir(tmp_path)
    forbid_work(monkeypatch)  # a worker, a manifest or a timing started fails the test
    with pytest.raises(gemmreg.UsageError) as raised:
        call()
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_a_folder_that_holds_a_run_is_refused_and_let_go_of(monkeypatch, tmp_path):
    forbid_work(monkeypatch)
    (tmp_path / "run.json").write_text("{}")
    held = len(run_folder._HELD)
    with pytest.raises(gemmreg.UsageError, match=r"already holds a run .*or force to replace"):
        gemmreg.compare(PAIR, shape="8x8x8", out=tmp_path)
    assert len(run_folder._HELD) == held  # a notebook may try again with force=True


COMMANDS = {
    "compare": (
        compare_command,
        "compare torch_ref triton_grouped --shape 16x16x16 --dtype fp16 --processes 3 "
        "--margin 2 --seed 7 --l2 dirty --out OUT --force",
        lambda out: gemmreg.compare(
            PAIR, "16x16x16", "fp16", processes=3, margin=2, seed=7, l2="dirty", out=out, force=True
        ),
    ),
    "bench": (
        bench_command,
        "bench torch_ref --shape 16,8x8x4 --dtype fp32,fp16 --layout padded --budget 30 "
        "--max-time 0.5 --out OUT",
        lambda out: gemmreg.bench(
            ["torch_ref"], "16,8x8x4", ["fp32", "fp16"], "padded", budget=30, max_time=0.5, out=out
        ),
    ),
    "check": (
        check_command,
        "check torch_ref --full --dtype fp16 --layout rowmajor,padded --seed 3 --timeout 9",
        lambda out: gemmreg.check(
            ["torch_ref"],
            full=True,
            dtypes="fp16",
            layouts=["rowmajor", "padded"],
            seed=3,
            timeout=9,
        ),
    ),
}
"""Each command's work (the function of its module named after it), a
command line and the call that asks the same."""


def _asked(request: object) -> dict:
    """A request's fields but the manifest's record of how it was asked
    (the command typed, or the call)."""
    fields = attrs.asdict(request, recurse=False)  # type: ignore[arg-type]
    return {name: value for name, value in fields.items() if name != "manifest"}


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_line_hands_the_api_s_request_to_the_same_work(command, monkeypatch, tmp_path):
    """Each command parses its options once into the request the call builds,
    and hands it to the same function."""
    module, argv, call = COMMANDS[command]
    forbid_work(monkeypatch)
    handed = hand_over(monkeypatch, (module, command))
    out = tmp_path / "out"
    with pytest.raises(Handed):
        cli.main(argv.replace("OUT", str(out)).split())
    with pytest.raises(Handed):
        call(out)
    typed, called = handed
    assert _asked(called) == _asked(typed)
    if command != "check":
        assert typed.manifest == {k: v for k, v in called.manifest.items() if k != "command"}


def test_importing_gemmreg_leaves_the_api_and_torch_unimported():
    code = (
        "import sys, gemmreg; before = 'gemmreg.api' in sys.modules; gemmreg.compare; "
        "print(before, 'gemmreg.api' in sys.modules, 'torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "False"]
    with pytest.raises(AttributeError, match="has no attribute 'compared'"):
        gemmreg.compared  # noqa: B018


TIMED = dict(seed=7, margin=2.5, repeats=11, warmup=3, max_time=0.75, timeout=99.0, l2="dirty")
"""A distinct value for each timing keyword but the count (``device_processes``
is added where a count is given: with ``processes``, a fixed count)."""


@pytest.mark.parametrize(
    "count", [dict(processes=4, device_processes=5), dict(budget=31.0)], ids=["fixed", "budget"]
)
def test_each_timing_keyword_reaches_its_own_option(count, monkeypatch):
    """The calls take their timing keywords by name into the request: a
    keyword handed to another's place would show here as a swapped field."""
    from gemmreg.commands import keywords, sweep_calls
    from gemmreg.commands.requests import TimingAsked

    assert set(keywords.TIMING_KEYWORDS) == set(attrs.fields_dict(TimingAsked))
    for call in (gemmreg.compare, gemmreg.bench, sweep_calls.resume):
        assert set(keywords.TIMING_KEYWORDS) <= set(inspect.signature(call).parameters)
    forbid_work(monkeypatch)
    handed = hand_over(monkeypatch, (compare_command, "compare"), (bench_command, "bench"))
    with pytest.raises(Handed):
        gemmreg.compare(PAIR, "16x16x16", **TIMED, **count)
    with pytest.raises(Handed):
        gemmreg.bench(["torch_ref"], "16", **TIMED, **count)
    for request in handed:
        assert request.timing == TimingAsked(**TIMED, **count)
