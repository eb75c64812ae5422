"""``compare --ncu``/``--nsys`` must profile the code that was timed: the
kernels named in the profiler's summary are checked against those the timed
calls launched (CUPTI's names, kept in the kernel's summary), and the
profiled worker gets the timed processes' caches, so a plugin that tunes finds
the choice it timed instead of tuning again under the profiler."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import FAKE_PROFILER_DIR, fake_ncu_env, run_gemmreg
from gemmreg.contract.records import Problem
from gemmreg.timing import profiler_capture
from gemmreg.timing.profiler_tools import base_name, kernels_mismatch, profiled_kernels

NCU_CSV = (
    "==PROF== a note above the header\n"
    '"ID","Process ID","Kernel Name","Section Name","Metric Name","Metric Value"\n'
    '"0","1350","gemm_tiled","GPU Speed Of Light Throughput","SM Frequency","1.64"\n'
    '"0","1350","gemm_tiled","Launch Statistics","Grid Size","1024"\n'
    '"1","1350","splitk_reduce","Launch Statistics","Grid Size","8"\n'
)
NSYS_CSV = (
    '"Time (%)","Total Time (ns)","Instances","Name"\n'
    '"99.0","262000","1","void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm>(Params)"\n'
)


def test_the_profilers_summaries_name_their_kernels_once_each_in_order():
    assert profiled_kernels("ncu", NCU_CSV) == ["gemm_tiled", "splitk_reduce"]
    assert profiled_kernels("nsys", NSYS_CSV) == [
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm>(Params)"
    ]
    assert profiled_kernels("ncu", "no csv at all\n") == []


def test_two_tools_spellings_of_one_kernel_compare_equal():
    assert base_name("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm>(Params)") == "Kernel2"
    assert base_name("Kernel2") == "Kernel2"
    assert base_name("at::native::(anonymous namespace)::fill<float>(float*, int)") == "fill"
    assert base_name("gemm_persistent_tma") == "gemm_persistent_tma"


def test_a_profile_of_another_kernel_than_the_timed_one_is_a_mismatch():
    why = kernels_mismatch(["gemm_tiled"], ["gemm_persistent_tma"])
    assert why is not None
    assert "gemm_tiled" in why and "gemm_persistent_tma" in why
    assert kernels_mismatch(["gemm_tiled"], ["gemm_tiled"]) is None
    assert kernels_mismatch(["Kernel2"], ["void ns::Kernel2<int>(P)"]) is None
    assert kernels_mismatch(["a"], ["a", "b"]) is not None  # a launch the profile missed
    assert "names no kernel" in (kernels_mismatch([], ["a"]) or "")


def _profile(tmp_path: Path, profiled: str, timed: tuple[str, ...]) -> dict:
    env = {
        **os.environ,
        **fake_ncu_env(tmp_path / "calls.jsonl"),
        "GEMMREG_FAKE_NCU_KERNEL": profiled,
    }
    problem = Problem(m=8, n=8, k=8, dtype="fp32", layout="rowmajor")
    return profiler_capture.run_profiler(
        "ncu",
        "fake_good",
        problem,
        7,
        tmp_path / "run",
        executable=FAKE_PROFILER_DIR / "ncu",
        env=env,
        timed_kernels=timed,
    )


def test_the_entry_says_mismatch_when_the_profile_is_not_of_the_timed_kernels(
    fake_plugins, tmp_path
):
    fake_plugins("good")
    entry = _profile(tmp_path, "gemm_tiled", ("gemm_persistent_tma",))
    assert entry["status"] == "mismatch", entry
    assert "not the code that was timed" in entry["reason"]
    assert entry["profiled_kernels"] == ["gemm_tiled"]
    assert entry["timed_kernels"] == ["gemm_persistent_tma"]
    assert entry["files"]["report"]  # the report is kept all the same, for a look


def test_the_entry_is_ok_when_the_profile_is_of_the_timed_kernels(fake_plugins, tmp_path):
    fake_plugins("good")
    entry = _profile(tmp_path, "gemm_tiled", ("gemm_tiled",))
    assert entry["status"] == "ok", entry
    assert entry["kernels_checked"] == "yes"
    unchecked = _profile(tmp_path, "gemm_tiled", ())  # no device profile, as on the CPU
    assert unchecked["status"] == "ok"
    assert unchecked["kernels_checked"].startswith("no:")


def test_the_profiled_worker_gets_the_caches_the_timed_processes_filled(fake_plugins, tmp_path):
    fake_plugins("tuning_cache")
    calls = tmp_path / "calls.jsonl"
    out = tmp_path / "run"
    done = run_gemmreg(
        *("compare", "torch_ref", "fake_tuning_cache", "--shape", "8x8x8", "--processes", "2"),
        *("--max-time", "0.001", "--ncu=fake_tuning_cache", "--out", str(out)),
        env=fake_ncu_env(calls),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (call,) = [json.loads(line) for line in calls.read_text().splitlines()]
    choice = json.loads(call["cache_files"]["fake_tuning_cache.json"])
    assert choice["pid"] != call["pid"]  # written by a timed process, found by the profiled one
    assert "gemmreg-profiled-caches-" in call["cache_dir"]  # the kept copy, not the user's


def test_bench_profiles_the_kernel_at_every_point_and_saves_the_entries(fake_plugins, tmp_path):
    fake_plugins("good")
    calls = tmp_path / "calls.jsonl"
    out = tmp_path / "run"
    done = run_gemmreg(
        *("bench", "torch_ref", "fake_good", "--shape", "8,16", "--processes", "2"),
        *("--max-time", "0.001", "--ncu=fake_good", "--out", str(out)),
        env=fake_ncu_env(calls),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    tasks = [json.loads(line)["tasks"][0] for line in calls.read_text().splitlines()]
    assert [(t["kernels"], t["problem"]["m"]) for t in tasks] == [
        (["fake_good"], 8),
        (["fake_good"], 16),
    ]
    entries = json.loads((out / "manifest.json").read_text())["profilers"]
    assert [e["problem"] for e in entries] == ["fp32-rowmajor-8x8x8", "fp32-rowmajor-16x16x16"]
    assert all(e["status"] == "ok" for e in entries), entries
    files = {p.name for p in (out / "profiler").iterdir()}
    assert "ncu-fake_good-fp32-rowmajor-16x16x16.ncu-rep" in files
    assert "ncu-fake_good-fp32-rowmajor-8x8x8.csv" in files
    report = run_gemmreg("report", str(out))  # the run, saved again, still reads back
    assert report.returncode == 0, report.stderr[-2000:]


def test_bench_refuses_a_profiler_with_ray_in_one_line():
    done = run_gemmreg(
        *("bench", "torch_ref", "--shape", "8", "--ray", "local", "--ncu"),
        env=fake_ncu_env(),
    )
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("--ray and --ncu: profile on one machine, without --ray")
    )
