"""``compare --ncu``: one kernel of the comparison in a fresh worker under
Nsight Compute, after the timing. On the CPU through a stand-in for ``ncu``
(tests/fake_profiler/ncu) that records its argv and the worker's tasks, writes
a fake report and execs the real worker, so the task, the worker's capture
and the files kept are real."""

from __future__ import annotations

import argparse
import json

import pytest
from conftest import fake_ncu_env, run_gemmreg
from gemmreg.commands import cli_profiler
from gemmreg.contract.options import UsageError
from gemmreg.timing import profiler_tools
from offline_cli import forbid_work, run_main


def test_compare_ncu_profiles_one_kernel_with_the_timed_inputs(fake_plugins, tmp_path):
    fake_plugins("good")
    calls = tmp_path / "calls.jsonl"
    out = tmp_path / "run"
    done = run_gemmreg(
        *("compare", "torch_ref", "fake_good", "--shape", "8x8x8", "--processes", "2"),
        *("--max-time", "0.001", "--seed", "7", "--ncu=fake_good", "--out", str(out)),
        env=fake_ncu_env(calls),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (call,) = [json.loads(line) for line in calls.read_text().splitlines()]
    argv = call["argv"]
    assert argv[argv.index("--clock-control") + 1] == "none"  # never lock clocks
    assert argv[argv.index("--profile-from-start") + 1] == "off"  # the capture range only
    assert argv[argv.index("--section") + 1] == "SpeedOfLight"
    (task,) = call["tasks"]
    assert task["kind"] == "profile" and task["capture"] is True
    assert task["kernels"] == ["fake_good"]  # one kernel: the one named
    assert (task["problem"]["m"], task["problem"]["n"], task["problem"]["k"]) == (8, 8, 8)
    assert task["seed"] == 7
    assert call["profiling"] == "ncu"
    files = {p.name for p in (out / "profiler").iterdir()}
    assert files == {"ncu-fake_good.ncu-rep", "ncu-fake_good.log", "ncu-fake_good.csv"}
    assert "fake ncu report" in (out / "profiler" / "ncu-fake_good.csv").read_text()
    (entry,) = json.loads((out / "manifest.json").read_text())["profilers"]
    assert entry["status"] == "ok", entry
    assert entry["kernel"] == "fake_good" and entry["problem"] == "fp32-rowmajor-8x8x8"
    assert entry["files"]["report"] == "profiler/ncu-fake_good.ncu-rep"
    assert "fake" in entry["version"]
    assert "profiled" in done.stderr


def test_a_missing_profiler_is_refused_before_any_work(monkeypatch, capsys, tmp_path):
    forbid_work(monkeypatch)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(profiler_tools, "FALLBACK_ROOTS", ())
    outcome = run_main(["compare", "torch_ref", "triton_grouped", "--ncu"], capsys)
    outcome.assert_refused()
    assert "ncu not found" in outcome.err
    outcome = run_main(["compare", "torch_ref", "triton_grouped", "--nsys"], capsys)
    outcome.assert_refused()
    assert "nsys not found" in outcome.err


def test_the_profiled_kernel_is_one_of_those_compared(monkeypatch, capsys):
    forbid_work(monkeypatch)
    monkeypatch.setenv("PATH", fake_ncu_env()["PATH"])
    outcome = run_main(["compare", "torch_ref", "triton_grouped", "--ncu=hip_tiled"], capsys)
    outcome.assert_refused()
    assert "not one of the kernels compared" in outcome.err


def test_the_default_kernel_is_the_first_named(monkeypatch):
    monkeypatch.setenv("PATH", fake_ncu_env()["PATH"])
    args = argparse.Namespace(names=["triton_tuned", "torch_ref"], ncu="", nsys=None)
    assert cli_profiler.chosen(args) == [("ncu", "triton_tuned")]
    args.ncu = "torch_ref"
    assert cli_profiler.chosen(args) == [("ncu", "torch_ref")]
    with pytest.raises(UsageError, match="NVIDIA-only"):
        cli_profiler.refuse_on("rocm", [("ncu", "torch_ref")])


def test_nsys_captures_the_profiler_range_alone(tmp_path):
    report = profiler_tools.report_path(tmp_path, "nsys", "k")
    command = profiler_tools.command("nsys", "nsys", report, tmp_path / "log")
    assert "--capture-range=cudaProfilerApi" in command
    assert command[command.index("--output") + 1] == str(tmp_path / "nsys-k")
    assert report.name == "nsys-k.nsys-rep"  # what nsys writes for that output


def test_compare_at_several_dtypes_profiles_each_into_files_of_its_own(tmp_path):
    """One profile per dtype, each file named by its point, so the second
    dtype's profile cannot overwrite the first's."""
    calls = tmp_path / "calls.jsonl"
    out = tmp_path / "run"
    done = run_gemmreg(
        *("compare", "torch_ref", "triton_baseline", "--shape", "8x8x8", "--processes", "2"),
        *("--dtype", "fp32,fp16", "--max-time", "0.001", "--ncu=torch_ref", "--out", str(out)),
        env=fake_ncu_env(calls),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    tasks = [json.loads(line)["tasks"] for line in calls.read_text().splitlines()]
    assert [task["problem"]["dtype"] for (task,) in tasks] == ["fp32", "fp16"]
    entries = json.loads((out / "manifest.json").read_text())["profilers"]
    assert [(e["status"], e["problem"]) for e in entries] == [
        ("ok", "fp32-rowmajor-8x8x8"),
        ("ok", "fp16-rowmajor-8x8x8"),
    ]
    reports = [out / entry["files"]["report"] for entry in entries]
    assert len(set(reports)) == 2 and all(report.is_file() for report in reports)
