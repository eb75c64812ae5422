"""``bench --devices`` stopped by Ctrl-C, SIGTERM or SIGHUP while a point is
in flight on one GPU (pretend GPUs: GEMMREG_FAKE_DEVICES): the exit code is
the signal's, the finished points are kept, marked partial, and the run says
it was interrupted, as on one GPU. The signal comes from the kernel of one
point (tests/fake_plugins/signals_parent.py), so it arrives while that point
is in flight, whatever the machine's speed."""

from __future__ import annotations

import json

import pytest
from conftest import run_gemmreg
from gemmreg.fanout.sweeping import INTERRUPTED_NOTE
from gemmreg.workers import devices


@pytest.mark.parametrize(("signal", "code"), [("SIGTERM", 143), ("SIGINT", 130), ("SIGHUP", 129)])
def test_a_signal_mid_sweep_on_devices_keeps_the_finished_points(
    tmp_path, fake_plugins, signal, code
):
    fake_plugins("signals_parent")
    out = tmp_path / "run"
    env = {
        devices.FAKE_DEVICES_ENV: "NVIDIA H200,NVIDIA H200",
        "GEMMREG_PLUGINS": "torch_ref",
        "GEMMREG_TEST_SIGNAL_AT_M": "24",
        "GEMMREG_TEST_SIGNAL_MARKER": str(tmp_path / "signalled"),
        "GEMMREG_TEST_SIGNAL": signal,
    }
    done = run_gemmreg(
        *("bench", "torch_ref", "fake_signals_parent", "--shape", "8:40:8", "--devices", "all"),
        *("--processes", "2", "--repeats", "2", "--warmup", "1", "--out", str(out)),
        env=env,
        hangup=True,
    )
    assert (tmp_path / "signalled").exists()
    assert done.returncode == code, done.stderr[-3000:]
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["partial"] is True
    assert run["manifest"]["stopped"] == INTERRUPTED_NOTE
    # The thread that took the third point (m 24) had finished one before it.
    kept = [report["problem"]["m"] for report in run["reports"]]
    assert kept and 24 not in kept and set(kept) <= {8, 16, 32, 40}
