"""Every malformed input is refused before any work starts, in one line with
exit 2, and the exit codes CI reads do not lie.

The command line runs in-process (``gemmreg.cli.main``) with every way of
starting work made to fail the test (see ``offline_cli``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import gemmreg
import pytest
from conftest import REPO, TESTS, run_gemmreg
from gemmreg import cli
from gemmreg.checking import check_runner
from gemmreg.contract import backend
from gemmreg.contract.records import Problem
from gemmreg.contract.saved_files import packed_names
from gemmreg.reporting import checksums, render, runs
from gemmreg.timing import device_memory
from gemmreg.timing.comparing import CompareReport, KernelSummary, ProcessRun
from offline_cli import WorkStarted

PAIR = ["compare", "torch_ref", "triton_grouped"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "torch_ref", "--shape", "1:²:1"], "malformed range '1:²:1'"),
        (["bench", "torch_ref", "--shape", "٣٢"], "malformed shape '٣٢'"),
        ([*PAIR, "--shape", "١x٢x٣"], "malformed shape"),
        ([*PAIR, "--shape", "1x²x1"], "malformed shape"),
        ([*PAIR, "--shape", ""], "malformed shape ''"),
        ([*PAIR, "--shape", "0x4x4"], "every dimension must be at least 1"),
        ([*PAIR, "--shape", "12x"], "malformed shape '12x'"),
        ([*PAIR, "--processes", "0"], "--processes: must be from 1 to 64, got 0"),
        ([*PAIR, "--processes", "1000"], "--processes: must be from 1 to 64"),
        ([*PAIR, "--processes", "٣"], "--processes: expected an integer"),
        ([*PAIR, "--device-processes", "0"], "--device-processes: must be from 1 to 64, got 0"),
        ([*PAIR, "--budget", "-1"], "--budget: must be from 0 to 86400, got -1"),
        ([*PAIR, "--budget", "nan"], "--budget: must be a finite number"),
        (
            [*PAIR, "--budget", "30", "--processes", "5"],
            "--processes and --budget: one or the other",
        ),
        (
            ["bench", "torch_ref", "--shape", "64", "--processes", "3", "--budget", "0"],
            "--processes and --budget: one or the other",
        ),
        ([*PAIR, "--budget", "30", "--ray", "local"], "--budget and --ray: compare on Ray times"),
        (
            ["bench", "torch_ref", "--device-processes", "x"],
            "--device-processes: expected an integer",
        ),
        ([*PAIR, "--repeats", "0"], "--repeats: must be from 1"),
        ([*PAIR, "--warmup", "-1"], "--warmup: must be from 0"),
        ([*PAIR, "--max-time", "0"], "--max-time: must be above 0"),
        ([*PAIR, "--max-time", "nan"], "--max-time: must be a finite number"),
        ([*PAIR, "--max-time", "1e9"], "--max-time: must be above 0 up to 3600"),
        ([*PAIR, "--max-time", "1_0"], "--max-time: expected a number"),
        ([*PAIR, "--max-time", "0x10"], "--max-time: expected a number"),
        ([*PAIR, "--budget", "\u0661\u0660"], "--budget: expected a number"),
        ([*PAIR, "--timeout", "3000000"], "--timeout: must be above 0 up to 86400, got 3e+06"),
        (["bench", "torch_ref", "--shape", "8", "--timeout", "1e300"], "--timeout: must be above"),
        ([*PAIR, "--timeout", "١٠"], "--timeout: expected a number above 0 up to 86400"),
        ([*PAIR, "--timeout", "0"], "--timeout: must be above 0 up to 86400, got 0"),
        ([*PAIR, "--timeout", "inf"], "--timeout: must be a finite number"),
        (["check", "--timeout", "nan"], "--timeout: must be a finite number"),
        (["check", "--timeout", "1e9"], "--timeout: must be above 0 up to 86400"),
        ([*PAIR, "--seed", "-3"], "--seed: must be from 0"),
        ([*PAIR, "--dtype", ""], "--dtype '' names an empty dtype"),
        ([*PAIR, "--dtype", "fp8"], "unknown dtype 'fp8'"),
        ([*PAIR, "--out", ""], "--out: is empty"),
        ([*PAIR, "--ray", ""], "--ray: is empty: name a Ray address"),
        (["bench", "torch_ref", "--shape", "8", "--ray", " "], "--ray: is empty"),
        (["check", "--ray", ""], "--ray: is empty"),
        (["compare", "torch_ref"], "compare needs at least two plugins"),
        (["compare", "torch_ref", "torch_ref"], "compare names a plugin twice"),
        (["compare", "torch_ref", "nope"], "unknown plugin 'nope'"),
        (["check", "--dtype", ""], "--dtype '' names an empty dtype"),
        (["check", "--layout", ","], "--layout ',' names an empty layout"),
        (["check", "--layout", "diagonal"], "unknown layout 'diagonal'"),
        (["check", "nope"], "unknown plugin 'nope'"),
        (["bench", "torch_ref", "--shape", ""], "malformed shape ''"),
        (["bench", "torch_ref", "--shape", "9:3:1"], "malformed range '9:3:1'"),
        (["bench", "torch_ref", "--shape", "1:10:0"], "STEP >= 1"),
        (["bench", "torch_ref", "--shape", "1:100000:1"], "more than 1000 shapes"),
        (["bench", "torch_ref", "--shape", "64", "--dtype", "fp32,fp32"], "names a dtype twice"),
        (["report", "a", "--threshold", "nan"], "--threshold: must be a finite number"),
        (["report", "a", "--threshold", "-5"], "--threshold: must be from 0 to 1000, got -5"),
        (["report", "a", "--threshold", "inf"], "--threshold: must be a finite number"),
        (["report", ""], "argument runs: is empty"),
        (["report", "a", "b", "c"], "a: no such run directory"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([*PAIR, "--l2", "warm"], "argument --l2: invalid choice: 'warm'"),
        (["bench", "torch_ref", "--l2", ""], "argument --l2: invalid choice: ''"),
    ],
)
def test_malformed_options_are_one_line_and_exit_2(cli_offline, argv, message):
    outcome = cli_offline(*argv)
    outcome.assert_refused()
    assert message in outcome.err


@pytest.mark.parametrize("command", [[*PAIR, "--shape"], ["bench", "torch_ref", "--shape"]])
def test_a_shape_that_cannot_fit_never_reaches_a_worker(cli_offline, command):
    outcome = cli_offline(*command, "100000000x100000000x1")  # 10^16 elements in C
    outcome.assert_refused()
    assert "needs 35.53 PiB (40000000800000000 bytes) for A, B and C" in outcome.err
    assert "refused before any worker started" in outcome.err


def test_memory_is_judged_against_the_whole_gpu(monkeypatch):
    gpu = backend.BackendInfo(
        kind="cuda", device="cuda", device_name="H200", triton_interpreter=False
    )
    properties = type("Properties", (), {"total_memory": 150_000_000_000})
    monkeypatch.setattr("torch.cuda.get_device_properties", lambda index: properties)

    def refusal(m, n, k, dtype, **fields):
        problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype, **fields)
        return device_memory.memory_refusal(problem, gpu)

    assert refusal(65600, 64, 32768, "fp32") is None
    assert refusal(131072, 131072, 131072, "fp16") is None  # 96 GiB
    assert refusal(262144, 262144, 262144, "fp16") == (
        "shape 262144x262144x262144 fp16 needs 384 GiB (412316860416 bytes) for A, B and C; "
        "H200 has 139.7 GiB"
    )
    # C in its own dtype: 2^36 fp8 elements each of A and B (128 GiB) and 2^32 of C fit
    # with a bf16 C (8 GiB), not with an fp32 one (16 GiB); counted in fp8, both would
    assert refusal(65536, 65536, 2**20, "fp8e4m3", out_dtype="bf16") is None
    too_wide = refusal(65536, 65536, 2**20, "fp8e4m3", out_dtype="fp32")
    assert too_wide is not None and "fp8e4m3-fp32-tensor needs 144 GiB" in too_wide
    # int8's C is int32: four bytes an element where A's and B's take one
    int8 = refusal(65536, 65536, 2**20, "int8")
    assert int8 is not None and "shape 65536x65536x1048576 int8 needs 144 GiB" in int8
    # every item of a batch, one B per member of a grouped problem
    assert refusal(32768, 32768, 32768, "fp16") is None  # 6 GiB
    batched = refusal(32768, 32768, 32768, "fp16", batch=32)
    assert batched is not None and "b32-fp16-rowmajor-32768x32768x32768 needs 192 GiB" in batched
    grouped = gemmreg.Problem(m=2, n=32768, k=32768, dtype="fp16", groups=(1,) * 2 + (0,) * 70)
    assert "g72_" in (device_memory.memory_refusal(grouped, gpu) or "")


def test_out_naming_an_existing_file_is_refused_before_the_run(cli_offline, tmp_path):
    (tmp_path / "taken").write_text("not a directory")
    for argv in (
        [*PAIR, "--out", "taken"],
        ["check", "torch_ref", "--out", "taken"],
        ["bench", "torch_ref", "--shape", "8", "--out", "taken"],
    ):
        outcome = cli_offline(*argv)
        outcome.assert_refused()
        assert "--out 'taken' exists and is not a directory" in outcome.err


@pytest.mark.parametrize("where", ["taken/inside", "/proc/gemmreg-cannot-write-here"])
def test_out_in_an_unwritable_place_is_refused_before_the_run(cli_offline, tmp_path, where):
    (tmp_path / "taken").write_text("a file, so nothing can be created under it")
    outcome = cli_offline(*PAIR, "--out", where)
    outcome.assert_refused()
    assert f"--out {where!r}: cannot write there" in outcome.err


@pytest.fixture
def saved_run(tmp_path):
    """A small valid run directory, written by the real writer."""
    problem = Problem(m=8, n=8, k=8)
    run = ProcessRun(kernel="k", process=0, status="timed", round_ms=(1.0, 1.5))
    summary = KernelSummary(
        kernel="k",
        package="p",
        precision="ieee_fp32",
        math="ieee_fp32",
        generator="g",
        status="timed",
        process_medians_ms=(1.25,),
        center_ms=1.25,
        low_ms=1.25,
        high_ms=1.25,
        tflops=0.001,
    )
    report = CompareReport(
        problem=problem,
        processes=1,
        seed=1,
        clock="test",
        device_name="cpu",
        summaries=(summary,),
        verdicts=(),
        runs=(run,),
    )
    runs.write_run(tmp_path / "run", {"device_name": "cpu"}, [report], partial=False)
    return tmp_path / "run"


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: d["reports"][0]["runs"][0].update(round_ms=[1.0, -2.0]), "cannot be negative"),
        (lambda d: d["reports"][0]["runs"][0].update(round_ms=[1.0, "nan"]), "finite number"),
        (lambda d: d["reports"][0]["problem"].update(m=-4), "must be a positive integer"),
        (
            lambda d: d["reports"][0]["problem"].update(dtype="complex64"),
            "problem.dtype: expected one of 'fp32', 'fp16', 'bf16', 'fp8e4m3', 'fp8e5m2', "
            "'int8', got 'complex64'",
        ),
        (lambda d: d["reports"][0].update(processes="3"), "expected an integer"),
        (lambda d: d["reports"][0].update(colour="blue"), "unknown field 'colour'"),
        (lambda d: d["reports"][0].pop("problem"), "missing field 'problem'"),
        (lambda d: d.update(reports={}), "'reports' must be a non-empty list"),
        (lambda d: d.update(partial="yes"), "'partial' must be true or false"),
    ],
)
def test_a_run_with_invalid_values_is_refused_naming_the_field(
    cli_offline, saved_run, damage, message
):
    data = json.loads((saved_run / "run.json").read_text())
    damage(data)
    (saved_run / "run.json").write_text(json.dumps(data))
    # An edit accepted as such is still held to the schema, in one line.
    outcome = cli_offline("report", str(saved_run), "--accept-edited")
    outcome.assert_refused()
    assert message in outcome.err and "run.json is not a readable gemmreg run" in outcome.err


def test_a_run_that_is_not_utf8_a_folder_or_a_file_in_the_wrong_place_is_refused(
    cli_offline, saved_run, tmp_path
):
    assert cli_offline("report", str(saved_run)).code == 0  # the undamaged run reads
    (tmp_path / "binary").mkdir()
    (tmp_path / "binary" / "run.json").write_bytes(b'{"reports": "\xff\xfe"}')
    (tmp_path / "folder" / "run.json").mkdir(parents=True)
    (tmp_path / "empty").mkdir()
    cases = {
        "binary": "is not UTF-8 text (bad byte at offset 13)",
        "folder": "run.json is a directory, not a file",
        str(saved_run / "run.json"): "is a file: name the run's directory",
        "empty": "is not a gemmreg run (no run.json)",
        "missing": "missing: no such run directory",
    }
    for path, message in cases.items():
        outcome = cli_offline("report", str(saved_run), path)
        outcome.assert_refused()
        assert message in outcome.err


def test_plot_into_an_unwritable_place_is_refused_before_plotting(cli_offline, saved_run):
    pytest.importorskip("matplotlib")
    outcome = cli_offline("report", str(saved_run), "--plot", str(saved_run / "run.json"))
    outcome.assert_refused()
    assert "exists and is not a directory" in outcome.err


def test_compare_with_fewer_than_two_runnable_plugins_stops_before_timing(
    cli_offline, fake_plugins
):
    fake_plugins("good")  # fp32 only
    outcome = cli_offline("compare", "torch_ref", "hip_tiled")
    outcome.assert_refused()
    assert "runnable: torch_ref); hip_tiled: no GPU" in outcome.err
    outcome = cli_offline(
        "compare", "fake_good", "hip_naive", "--dtype", "fp16", "--shape", "8x8x8"
    )
    outcome.assert_refused()
    assert "(runnable: none); fake_good: dtype fp16 not declared" in outcome.err
    assert "hip_naive: no GPU" in outcome.err


def _only_plugins(monkeypatch, names):
    monkeypatch.setenv("GEMMREG_PLUGINS", names)


def test_check_where_nothing_ran_fails_with_one_line(cli_offline, monkeypatch):
    _only_plugins(monkeypatch, "hip_naive,hip_tiled")
    monkeypatch.setattr(check_runner, "run_check", _real_run_check)  # plans, must start no worker
    outcome = cli_offline("check")
    assert outcome.code == cli.EXIT_FAILURE
    (line,) = outcome.err.splitlines()
    assert line.startswith("gemmreg: nothing ran: every case was skipped (hip_naive: no GPU")
    _only_plugins(monkeypatch, "none")
    outcome = cli_offline("check")
    assert outcome.code == cli.EXIT_FAILURE
    assert outcome.err == "gemmreg: nothing ran: no plugin loaded (see gemmreg list)\n"


_real_run_check = check_runner.run_check


def _one_pass_each(kernels, cases, gpu, on_result=None, **_):
    """Stands in for the workers: every available kernel passes one case."""
    results = []
    for kernel in kernels:
        status = "skip" if kernel.name.startswith("hip_") else "pass"
        result = check_runner.CaseResult(kernel=kernel.name, case=cases[0], status=status)
        results.append(result)
        if on_result:
            on_result(result)
    return results


def test_strict_check_fails_on_unavailable_and_broken_plugins(
    cli_offline, monkeypatch, fake_plugins
):
    _only_plugins(monkeypatch, "torch_ref,hip_naive")
    fake_plugins("broken_import")
    monkeypatch.setattr(check_runner, "run_check", _one_pass_each)
    assert cli_offline("check").code == cli.EXIT_OK
    outcome = cli_offline("check", "--strict")
    assert outcome.code == cli.EXIT_FAILURE
    assert "gemmreg: strict: plugin 'hip_naive' is unavailable: no GPU" in outcome.err
    assert "strict: plugin 'fake_plugins.broken_import' is BROKEN: import" in outcome.err
    # Naming plugins leaves out the unavailable ones not named, never a BROKEN
    # one: its kernels are unknown, so no name can rule it out.
    named = cli_offline("check", "torch_ref", "--strict")
    assert named.code == cli.EXIT_FAILURE
    assert [line for line in named.err.splitlines() if "strict" in line] == [
        "gemmreg: strict: plugin 'fake_plugins.broken_import' is BROKEN: import: "
        "ModuleNotFoundError: No module named 'gemmreg_dependency_that_does_not_exist'"
    ]


def test_list_exits_0_with_broken_rows_unless_strict(cli_offline, fake_plugins, monkeypatch):
    _only_plugins(monkeypatch, "torch_ref")
    assert cli_offline("list").code == cli.EXIT_OK
    fake_plugins("broken_import")
    listed = cli_offline("list")
    assert listed.code == cli.EXIT_OK and "BROKEN: import" in listed.out
    strict = cli_offline("list", "--strict")
    assert strict.code == cli.EXIT_FAILURE
    assert strict.err.splitlines() == [
        "gemmreg: strict: plugin 'fake_plugins.broken_import' is BROKEN: import: "
        "ModuleNotFoundError: No module named 'gemmreg_dependency_that_does_not_exist'"
    ]


def test_an_interrupted_check_prints_and_keeps_the_cases_that_finished(
    cli_offline, monkeypatch, tmp_path
):
    _only_plugins(monkeypatch, "torch_ref")
    monkeypatch.setattr(
        "gemmreg.instruments.environment.manifest", lambda *a, **k: {"manifest": True}
    )

    def two_then_ctrl_c(kernels, cases, gpu, on_result=None, **_):
        for case in cases[:2]:
            on_result(check_runner.CaseResult(kernel="torch_ref", case=case, status="pass"))
        raise KeyboardInterrupt

    monkeypatch.setattr(check_runner, "run_check", two_then_ctrl_c)
    outcome = cli_offline("check", "--out", "evidence")
    assert outcome.code == cli.EXIT_INTERRUPTED
    assert outcome.out.startswith(render.PARTIAL_CHECK_BANNER)
    assert "2 pass, 0 fail" in outcome.out
    assert "2 finished cases kept, marked partial" in outcome.err
    saved = json.loads((tmp_path / "evidence" / "check.json").read_text())
    assert saved["partial"] is True and saved["counts"]["pass"] == 2 and len(saved["cases"]) == 2
    assert (tmp_path / "evidence" / "check.txt").read_text().startswith(render.PARTIAL_CHECK_BANNER)

    monkeypatch.setattr(check_runner, "run_check", _one_pass_each)
    whole = json.loads(cli_offline("check", "--format", "json").out)
    assert whole["partial"] is False


def test_ctrl_c_during_a_real_check_keeps_what_finished(tmp_path):
    """The real path: SIGINT reaches gemmreg while a worker runs a case."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        "GEMMREG_PLUGINS": "none",
        "GEMMREG_EXTRA_PLUGINS": "fake_plugins.good,fake_plugins.misbehaving",
        "FAKE_KERNELS": "fake_hang",
    }
    command = [sys.executable, "-m", "gemmreg", "check", "fake_good", "fake_hang"]
    with subprocess.Popen(  # -v: a line per passing case, to know when to interrupt
        [*command, "--layout", "rowmajor", "--dtype", "fp32", "-v", "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
        # A background job inherits SIGINT ignored, and Python then keeps it so:
        # give the command the default disposition a terminal's Ctrl-C meets.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    ) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:  # fake_good's cases pass; then fake_hang hangs
            if "fake_good" in line and ": pass" in line:
                break
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()  # the interrupt was lost: fail now, not after fake_hang's timeout
            raise
    assert proc.returncode == cli.EXIT_INTERRUPTED, err
    assert out.startswith(render.PARTIAL_CHECK_BANNER) and "fake_good" in out
    saved = json.loads((tmp_path / "check.json").read_text())
    assert saved["partial"] is True and saved["counts"]["pass"] >= 1


def test_the_real_command_refuses_in_one_line_too():
    done = run_gemmreg("bench", "torch_ref", "--shape", "1:²:1")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "gemmreg: error: malformed range '1:²:1': expected START:STOP:STEP or "
        "START:STOP:*FACTOR, e.g. 256:4096:256 or 256:4096:*2\n"
    )


def test_refusing_starts_no_work_even_when_asked_to(cli_offline, monkeypatch):
    """The guard itself: a valid command does reach the forbidden work."""
    _only_plugins(monkeypatch, "torch_ref")
    with pytest.raises(WorkStarted):
        cli_offline("check", "--dtype", "fp32")


def test_every_run_kept_as_evidence_still_reads():
    """The checks refuse what is malformed, not what real runs contain: every
    run recorded on the H200 passes them (stored packed as run.json.xz, or as run.json)."""
    evidence = REPO / "evidence"
    recorded = sorted(p for name in packed_names("run.json") for p in evidence.glob(f"**/{name}"))
    assert len(recorded) >= 50
    for path in recorded:
        manifest, reports, _ = runs.load_run(path.parent)
        assert reports and isinstance(manifest, dict), path


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: s.update(center_ms=None),
        lambda s: s.update(process_medians_ms=[]),
        lambda s: s.update(low_ms=0.0),
    ],
)
def test_a_timed_kernel_without_its_figures_is_refused_when_read(cli_offline, saved_run, damage):
    """Types right, values inconsistent: once exit 3 when the table was drawn."""
    path = saved_run / "run.json"
    data = json.loads(path.read_text())
    damage(data["reports"][0]["summaries"][0])
    del data[checksums.CHECKSUM_KEY]  # a run saved before checksums: the records judge it
    path.write_text(json.dumps(data))
    outcome = cli_offline("report", str(saved_run))
    outcome.assert_refused()
    assert "status 'timed' needs process medians" in outcome.err
