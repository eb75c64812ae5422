"""``--device N``: the device chosen through the environment every worker
inherits, refused in one line where it leaves no GPU. The GPU side (that a
worker then runs on that device) is the H200's to show; here, the choice, its
record in the manifest's switches, and the refusals."""

from __future__ import annotations

import argparse

import pytest
from gemmreg.deciding import device_choice
from gemmreg.deciding.options import UsageError
from gemmreg.interface import cli_device
from gemmreg.running import environment
from offline_cli import forbid_work, run_main

VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")


@pytest.fixture
def clean_devices(monkeypatch):
    """The test's changes to the device variables are undone after it."""
    for name in VARIABLES:
        monkeypatch.setenv(name, "")  # so that it is restored afterwards, even to unset
        monkeypatch.delenv(name)
    monkeypatch.setattr(device_choice, "rocm_likely", lambda: False)


def test_the_index_names_one_device_of_those_visible():
    assert device_choice.visible_devices(3, {}, rocm=False) == {"CUDA_VISIBLE_DEVICES": "3"}
    assert device_choice.visible_devices(0, {}, rocm=True) == {"HIP_VISIBLE_DEVICES": "0"}
    narrowed = {"CUDA_VISIBLE_DEVICES": "2, GPU-8a1f,5"}
    assert device_choice.visible_devices(1, narrowed, rocm=False) == {
        "CUDA_VISIBLE_DEVICES": "GPU-8a1f"
    }
    with pytest.raises(UsageError, match=r"leaves 3 device\(s\) visible, numbered 0 to 2"):
        device_choice.visible_devices(3, narrowed, rocm=False)


def test_the_choice_reaches_the_environment_workers_inherit_and_the_manifest(clean_devices):
    import os

    args = argparse.Namespace(device=2)
    cli_device.choose(args)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "2"
    assert environment.switches()["CUDA_VISIBLE_DEVICES"] == "2"
    untouched = argparse.Namespace(device=None)
    cli_device.choose(untouched)
    assert not hasattr(untouched, "device_environment")


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "torch_ref", "triton_grouped", "--device", "1"],
        ["bench", "torch_ref", "--shape", "8", "--device", "0"],
        ["check", "torch_ref", "--device", "0"],
    ],
)
def test_a_device_on_the_cpu_is_refused_before_any_work(argv, monkeypatch, capsys, clean_devices):
    forbid_work(monkeypatch)
    outcome = run_main(argv, capsys)
    outcome.assert_refused()
    assert f"--device {argv[-1]}: no GPU {argv[-1]} here" in outcome.err


def test_a_device_index_out_of_bounds_is_refused(monkeypatch, capsys, clean_devices):
    forbid_work(monkeypatch)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5")
    outcome = run_main(["compare", "torch_ref", "triton_grouped", "--device", "2"], capsys)
    outcome.assert_refused()
    assert "CUDA_VISIBLE_DEVICES='4,5' leaves 2 device(s) visible" in outcome.err
    outcome = run_main(["compare", "torch_ref", "triton_grouped", "--device", "-1"], capsys)
    outcome.assert_refused()
