"""A tiny run of the tuning harness (scripts/tune.py) under Triton's
interpreter: it writes the report, times the current choice, every
reduction, the TMA path and atomic mode, and rejects a wrong candidate.
test_tune.py checks the candidates it is given."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("tune")
    command = [sys.executable, str(SCRIPTS / "tune.py"), "--shapes", "16x16x256", "--quick",
               "--include-broken", "--dtypes", "fp16", "--out", str(out)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    return json.loads((out / "tune.json").read_text()), done.stdout


def test_a_tiny_interpreted_run_writes_the_report(report):
    data, stdout = report
    assert data["interpreted"] is True
    assert {(tuple(g["shape"]), g["dtype"], g["mode"]) for g in data["groups"]} == {
        ((16, 16, 256), "fp16", "splitk"),
        ((16, 16, 256), "fp16", "splitk_atomic"),
    }
    for group in data["groups"]:
        assert group["current"]["status"] == "ok"
        assert group["best"]["label"] != "broken"
        for row in group["candidates"]:
            if row["status"] == "ok":
                assert row["ms"] > 0 and row["torch_ms"] > 0
                assert row["ratio"] == pytest.approx(row["torch_ms"] / row["ms"])
    assert len(data["suggested_table"]) == 2
    assert "best config" in stdout and "suggested gemmreg_splitk/tuned.py TABLE" in stdout


def test_the_deliberately_wrong_candidate_is_rejected_with_the_reason(report):
    data, stdout = report
    for group in data["groups"]:
        broken = [r for r in group["candidates"] if r["label"] == "broken"]
        assert len(broken) == 1
        assert broken[0]["status"] == "rejected"
        assert broken[0]["why"].startswith("wrong: call 1:")
        assert "ms" not in broken[0]
    assert stdout.count("rejected 16x16x256") == 2


def test_the_interpreted_run_times_tma_candidates_and_suggests_the_knob(report):
    """The interpreter emulates TMA, so the quick grid runs that path too: its
    candidates come out correct (checked against torch.mm) and timed."""
    data, _ = report
    for group in data["groups"]:
        timed = [r for r in group["candidates"] if r["status"] == "ok"]
        assert any(r["config"]["tma"] and r["key"].split()[-2 if group["mode"] == "splitk" else -1]
                   == "tma" for r in timed)  # fmt: skip
        assert any(not r["config"]["tma"] for r in timed)


def test_deterministic_mode_times_every_reduction_and_a_wide_tree(report):
    """The quick grid's stage 2 tries fan-in 4 at any split, and the
    reduce-scatter, so the interpreter runs them through tune.py's
    correctness check and timing too."""
    data, _ = report
    det = next(g for g in data["groups"] if g["mode"] == "splitk")
    timed = {r["config"]["reduce"] for r in det["candidates"] if r["status"] == "ok"}
    assert timed == {"serial", "tree", "scatter"}
    wide = [r for r in det["candidates"] if r["config"]["fanin"] == 4]
    assert wide and all(r["status"] == "ok" and r["key"].endswith("tree-f4") for r in wide)
