"""What evidence carries with it: the tolerance beside every error, the
switches a run was taken under, one availability answer per command, and
storage that needs no renderer."""

from __future__ import annotations

import json

from gemmreg import environment


def test_a_manifest_records_the_switches_a_run_was_taken_under(monkeypatch):
    monkeypatch.setenv("GEMMREG_X", "1")
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "0")
    monkeypatch.setenv("GEMMREG_API_TOKEN", "hunter2")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter3")
    first = environment.manifest([])
    switches = first["switches"]
    assert switches["GEMMREG_X"] == "1"
    assert switches["TRITON_ALWAYS_COMPILE"] == "1"
    assert switches["NVIDIA_TF32_OVERRIDE"] == "0"
    assert switches["TRITON_INTERPRET"] == "1"  # this machine has no GPU: the interpreter runs
    assert switches["GEMMREG_API_TOKEN"] == environment.WITHHELD
    assert "AWS_SECRET_ACCESS_KEY" not in switches and "HOME" not in switches
    assert "hunter2" not in json.dumps(first) and "hunter3" not in json.dumps(first)
    monkeypatch.setenv("GEMMREG_X", "2")
    assert environment.manifest([])["switches"]["GEMMREG_X"] == "2"
