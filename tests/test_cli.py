"""The command line: ``python -m gemmreg`` and a comparison run as a user runs
them, in a fresh process; listings and refusals through ``main()`` in this one
(a fresh process is a torch import each)."""

from __future__ import annotations

import json

import pytest
from conftest import BUILT_INS, run_gemmreg
from gemmreg.cli import UsageError, parse_shape
from gemmreg.contract.records import Problem
from offline_cli import forbid_work, run_main


def test_list_shows_the_built_ins_with_hip_unavailable_and_why(capsys):
    """In-process like the JSON listing below (``gemmreg list --format json``
    runs as a fresh process in test_hostile_plugins.py)."""
    done = run_main(["list"], capsys)
    assert done.code == 0, done.err
    for name in BUILT_INS:
        assert name in done.out
    assert "no: no GPU" in done.out
    assert "no: TF32 is a tensor-core mode" in done.out  # torch_ref_tf32, off NVIDIA


def test_list_json_has_origin_precision_tolerance_and_availability(capsys):
    done = run_main(["list", "--format", "json"], capsys)  # in-process: no torch import to wait on
    assert done.code == 0
    rows = {row["name"]: row for row in json.loads(done.out)["plugins"]}
    assert rows["hip_tiled"]["available"] is False
    assert "NVRTC" in rows["hip_tiled"]["unavailable_reason"]
    assert rows["hip_regtiled"]["available"] is False
    assert "NVRTC" in rows["hip_regtiled"]["unavailable_reason"]
    grouped = rows["triton_grouped"]
    assert grouped["available"] is True
    assert grouped["package"].startswith("gemmreg ")
    assert grouped["precision"]["fp32"].startswith("ieee_fp32")
    assert grouped["tolerance"]["fp32"]["rtol"] == 3e-5


def test_a_broken_plugin_is_a_row_in_list(fake_plugins, capsys):
    fake_plugins("broken_import")
    done = run_main(["list"], capsys)
    assert done.code == 0
    assert "BROKEN: import: ModuleNotFoundError" in done.out
    assert "torch_ref" in done.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "nope"], "gemmreg: error: unknown plugin 'nope' (known: "),
        (["compare", "torch_ref", "nope"], "gemmreg: error: unknown plugin 'nope'"),
        (["compare", "torch_ref", "triton_grouped", "--shape", "12x"], "malformed shape '12x'"),
        (["compare", "torch_ref", "triton_grouped", "--shape", "0x4x4"], "malformed shape"),
        (["compare", "torch_ref"], "at least two plugins"),
        (["compare", "torch_ref", "triton_grouped", "--dtype", "fp8"], "unknown dtype 'fp8'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (
            ["compare", "torch_ref", "triton_grouped", "--max-time", "0"],
            "--max-time: must be above 0",
        ),
        (["bench", "torch_ref", "--shape", "9:3:1"], "malformed range '9:3:1'"),
        (["report", "a", "b", "c"], "a: no such run directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(args, message, monkeypatch, capsys):
    """In-process, with all work forbidden (a fresh process each cost 3 s of
    torch import; test_bad_input.py runs the real command once)."""
    forbid_work(monkeypatch)
    outcome = run_main(args, capsys)
    outcome.assert_refused()
    assert message in outcome.err


def test_python_dash_m_works_and_reports_the_version():
    done = run_gemmreg("--version")
    assert done.returncode == 0 and done.stdout.startswith("gemmreg ")


@pytest.mark.parametrize(("text", "dims"), [("512x512x512", (512, 512, 512)), ("1X2x3", (1, 2, 3))])
def test_shapes_parse(text, dims):
    assert parse_shape(text) == dims


@pytest.mark.parametrize("text", ["512", "1x2", "ax2x3", "1x2x3x4", "-1x2x3", ""])
def test_malformed_shapes_are_refused(text):
    with pytest.raises(UsageError, match="malformed shape"):
        parse_shape(text)


def test_max_time_caps_the_sampling_of_every_process(fake_plugins, tmp_path):
    """--max-time reaches the workers: each process stops at that cap (a bug
    once left bench and compare on the policy's 3 s)."""
    fake_plugins("good")
    done = run_gemmreg(
        *("compare", "torch_ref", "fake_good", "--shape", "8x8x8", "--processes", "2"),
        *("--max-time", "0.001", "--out", str(tmp_path)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    records = json.loads((tmp_path / "run.json").read_text())["reports"][0]["records"]
    # Each process stops at the cap, or, short of its minimum rounds, at the
    # hard cap of ten times it: either way the 0.001 s reached the worker.
    assert records and all("0.001 s" in r["stop_reason"] for r in records)


def test_a_verdict_taken_beside_another_process_on_the_gpu_is_flagged():
    from gemmreg.fanout.sweeping import flag_shared
    from gemmreg.timing.timing_records import CompareReport, Verdict

    verdict = Verdict(
        baseline="a",
        kernel="b",
        verdict="faster",
        speedup=1.1,
        interval=(1.05, 1.15),
        explanation="",
    )
    report = CompareReport(
        problem=Problem(m=8, n=8, k=8),
        processes=5,
        seed=1,
        clock="test",
        device_name="NVIDIA H200",
        summaries=(),
        verdicts=(verdict,),
        runs=(),
    )
    busy = {
        "gpu": {"other_processes": [{"pid": 4242, "name": "python", "used_memory_bytes": 2**30}]}
    }
    said: list[str] = []
    (flagged,) = flag_shared(report, busy, said.append).verdicts
    assert any(
        n.startswith("SHARED GPU: 1 other process on the GPU: pid 4242") for n in flagged.notes
    )
    assert said == [f"warning: {flagged.notes[-1]}"]
    assert flag_shared(report, {"gpu": {"other_processes": []}}, said.append) is report
    assert len(said) == 1
