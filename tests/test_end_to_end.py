"""The README's promises on a CPU-only machine, run through the real command."""

from __future__ import annotations

import json

import pytest
from conftest import BUILT_INS, run_gemmreg
from gemmreg.checking import sanitizer_tools

GPU_ONLY = ("hip_naive", "hip_tiled", "hip_regtiled")

CLI_CHECKED = ("torch_ref", "hip_naive", "hip_tiled", "hip_regtiled")
"""What the end-to-end ``gemmreg check`` names: a built-in that runs on the CPU
and every built-in that needs a GPU. Every case of the Triton built-ins runs in
test_builtin_matrix.py, through the same plan and the same worker tasks; under
the interpreter each is a worker and most of a minute, and through the command
it asserted nothing more (the compare below runs one on the command line)."""


@pytest.fixture(scope="module")
def cli_check():
    """``gemmreg check`` run once, end to end, with the sanitizer pass asked
    for (skipped on the CPU): the tests below each assert their part of its
    JSON and stderr. A process and a worker each cost a torch import; the same
    command twice asserted nothing more. Both tests that read it live in this
    module, so that pytest-xdist (which hands out whole modules) runs it once."""
    args = ("check", *CLI_CHECKED, "--dtype", "fp32", "--sanitize", "--format", "json")
    return run_gemmreg(*args)


def test_check_passes_on_the_cpu_and_skips_the_gpu_only_built_ins(cli_check):
    """The command, end to end, on fp32 (see ``cli_check``): exit 0, the seed's
    edge shapes and the mid square, the GPU-only built-ins skipped with the
    reason. Every case of every dtype of every built-in runs in
    test_builtin_matrix.py and the split-K example's in its own tests, through
    the same plan and worker tasks: running them here again asserted nothing
    new about the command."""
    assert set(CLI_CHECKED) <= set(BUILT_INS) and set(GPU_ONLY) <= set(CLI_CHECKED)
    done = cli_check
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    cases = report["cases"]
    assert {c["kernel"] for c in cases} == set(CLI_CHECKED)
    ran = [c for c in cases if c["kernel"] == "torch_ref" and c["status"] != "skip"]
    shapes = {c["case"]["problem"]["m"] for c in ran}
    assert {1, 3, 15, 17, 31, 128} <= shapes  # the seed's edge shapes and a mid square
    assert all(c["status"] == "pass" for c in ran)
    for name in GPU_ONLY:
        skipped = [c for c in cases if c["kernel"] == name]
        assert skipped and all(c["status"] == "skip" and "no GPU" in c["reason"] for c in skipped)
    assert report["counts"]["fail"] == 0


def test_check_skips_the_sanitizer_pass_on_the_cpu_with_the_reason(cli_check):
    """``gemmreg check ... --sanitize`` on the CPU: the reason on stderr, and
    torch_ref's sanitize rows (6 cases per tool) all skipped. (The sanitizer
    pass itself is test_sanitizer.py's.)"""
    done = cli_check
    assert done.returncode == 0, done.stderr
    assert f"sanitizer pass skipped: {sanitizer_tools.CPU_REASON}" in done.stderr
    cases = json.loads(done.stdout)["cases"]
    sanitized = [c for c in cases if c["kind"] == "sanitize" and c["kernel"] == "torch_ref"]
    assert len(sanitized) == 6 * len(sanitizer_tools.DEFAULT_TOOLS)
    assert {c["status"] for c in sanitized} == {"skip"}


def test_compare_prints_a_table_and_a_verdict(tmp_path):
    """No wall-clock assertion: on a loaded machine the time cap stopped a
    process before the sample minimum and this test failed. A fixed
    number of rounds takes the clock out of it; the stopping rule is the timing
    room's to test. A small shape keeps the interpreted Triton calls cheap."""
    args = ["torch_ref", "triton_grouped", "--shape", "32x32x32", "--repeats", "5"]
    # Its workers start before the command reads its plugins, as on a GPU
    # machine (off by default here, where two cores gain nothing from it).
    ahead = {"GEMMREG_START_AHEAD": "1", "GEMMREG_TRACE": "1"}
    done = run_gemmreg("compare", *args, "--warmup", "2", "--out", str(tmp_path), env=ahead)
    assert done.returncode == 0, done.stderr[-3000:]
    started, discovered = (
        done.stderr.index("starting workers ahead"),
        done.stderr.index("plugins discovered"),
    )
    assert started < discovered
    assert "range over 3 procs" in done.stdout
    assert "verdict: triton_grouped vs torch_ref:" in done.stdout
    assert "clock: perf_counter on the CPU" in done.stdout  # honestly labelled: no GPU events

    data = json.loads((tmp_path / "run.json").read_text())
    (report,) = data["reports"]
    for summary in report["summaries"]:
        assert summary["status"] == "timed"
        assert len(summary["process_medians_ms"]) == 3
        assert summary["low_ms"] <= summary["center_ms"] <= summary["high_ms"]
    runs = report["runs"]
    assert {r["process"] for r in runs} == {0, 1, 2}
    # Cold start: each kernel in a fresh process of its own, apart from the rounds.
    assert {c["kernel"]: c["status"] for c in report["cold"]} == {
        "torch_ref": "ok",
        "triton_grouped": "ok",
    }
    assert all(len(r["round_ms"]) == 5 and r["precheck"]["passed"] for r in runs)
    for record in report["records"]:  # both kernels in every round of every process
        assert record["rounds"] == 5 and record["log_ratios"]["end-to-end"]
    manifest = data["manifest"]
    assert manifest["backend"] == "cpu" and manifest["triton_interpreter"] is True
    assert manifest["precision_flags_pinned_in_workers"]["cuda.matmul.allow_tf32"] is False
    assert "triton_seed.py" in manifest["kernel_sources_sha256"]["triton_grouped"]
    assert manifest["command"].endswith(f"compare {' '.join(args)} --warmup 2 --out {tmp_path}")
    assert (tmp_path / "summary.csv").exists() and (tmp_path / "report.md").exists()
