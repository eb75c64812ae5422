"""``--device N``, the shorthand for ``--devices N``: the device chosen through
the environment every worker inherits, refused in one line where it leaves no
GPU. The GPU side (that a worker then runs on that device) is the H200's to
show; here, the choice, its record in the manifest's switches, and the
refusals, for the shorthand and for one index of ``--devices`` alike."""

from __future__ import annotations

import argparse
import os

import pytest
from gemmreg.commands import cli_device
from gemmreg.contract.options import UsageError
from gemmreg.instruments import environment
from gemmreg.workers import device_choice, devices
from offline_cli import forbid_work, run_main

VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", devices.PINNED_ENV)


@pytest.fixture
def clean_devices(monkeypatch):
    """The test's changes to the device variables are undone after it."""
    for name in VARIABLES:
        monkeypatch.setenv(name, "")  # so that it is restored afterwards, even to unset
        monkeypatch.delenv(name)


def test_the_index_names_one_device_of_those_visible():
    assert device_choice.parse_devices("3") == (3,) and device_choice.single((3,)) == 3
    assert device_choice.single((0, 1)) is None and device_choice.single("all") is None
    plain = devices.pin_device_env({}, 3)
    assert plain["CUDA_VISIBLE_DEVICES"] == plain["HIP_VISIBLE_DEVICES"] == "3"
    narrowed = {"CUDA_VISIBLE_DEVICES": "2, GPU-8a1f,5"}
    device_choice.check_visible("--device", 1, narrowed)
    assert devices.pin_device_env(narrowed, 1)["CUDA_VISIBLE_DEVICES"] == "GPU-8a1f"
    assert devices.pin_device_env({"HIP_VISIBLE_DEVICES": "4,6"}, 1)["HIP_VISIBLE_DEVICES"] == "6"
    with pytest.raises(UsageError, match=r"leaves 3 device\(s\) visible, numbered 0 to 2"):
        device_choice.check_visible("--device", 3, narrowed)


def test_the_choice_reaches_the_environment_workers_inherit_and_the_manifest(clean_devices):
    args = argparse.Namespace(device=2, devices=None)
    cli_device.choose(args)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == os.environ["HIP_VISIBLE_DEVICES"] == "2"
    assert environment.switches()["CUDA_VISIBLE_DEVICES"] == "2"
    assert environment.switches()["HIP_VISIBLE_DEVICES"] == "2"
    assert cli_device.several(args) is None  # the run is pinned, not spread
    untouched = argparse.Namespace(device=None, devices=None)
    cli_device.choose(untouched)
    assert not hasattr(untouched, "device_environment")


def test_a_pinned_process_knows_the_index_its_reports_record(clean_devices):
    assert devices.pinned_index() is None  # not pinned: the only GPU it sees
    cli_device.choose(argparse.Namespace(device=1, devices=None))
    assert devices.pinned_index() == 1  # --device 1's reports say GPU 1, not 0
    assert devices.pinned_index({devices.PINNED_ENV: "x"}) is None


def test_one_index_of_devices_pins_exactly_as_the_shorthand(clean_devices):
    shorthand = argparse.Namespace(device=1, devices=None)
    cli_device.choose(shorthand)
    pinned = {name: os.environ[name] for name in VARIABLES}
    for name in VARIABLES:
        del os.environ[name]
    longhand = argparse.Namespace(device=None, devices=" 1 ")
    cli_device.choose(longhand)
    assert {name: os.environ[name] for name in VARIABLES} == pinned
    assert longhand.device_environment == shorthand.device_environment
    spread = argparse.Namespace(device=None, devices="0,1")
    cli_device.choose(spread)  # several GPUs: each worker is pinned later, not this process
    assert cli_device.several(spread) == "0,1"


def test_device_and_devices_together_are_refused(monkeypatch, capsys, clean_devices):
    forbid_work(monkeypatch)
    outcome = run_main(["check", "torch_ref", "--device", "0", "--devices", "0,1"], capsys)
    outcome.assert_refused()
    assert "--device and --devices: one or the other" in outcome.err
    assert "CUDA_VISIBLE_DEVICES" not in os.environ


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "torch_ref", "triton_grouped", "--device", "1"],
        ["bench", "torch_ref", "--shape", "8", "--device", "0"],
        ["check", "torch_ref", "--device", "0"],
        ["check", "torch_ref", "--devices", "0"],
    ],
)
def test_a_device_on_the_cpu_is_refused_before_any_work(argv, monkeypatch, capsys, clean_devices):
    forbid_work(monkeypatch)
    outcome = run_main(argv, capsys)
    outcome.assert_refused()
    assert f"{argv[-2]} {argv[-1]}: no GPU {argv[-1]} here" in outcome.err


def test_a_device_index_out_of_bounds_is_refused(monkeypatch, capsys, clean_devices):
    forbid_work(monkeypatch)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5")
    outcome = run_main(["compare", "torch_ref", "triton_grouped", "--device", "2"], capsys)
    outcome.assert_refused()
    assert "CUDA_VISIBLE_DEVICES='4,5' leaves 2 device(s) visible" in outcome.err
    outcome = run_main(["compare", "torch_ref", "triton_grouped", "--devices", "2"], capsys)
    outcome.assert_refused()
    assert "--devices 2: CUDA_VISIBLE_DEVICES='4,5' leaves 2 device(s) visible" in outcome.err
    outcome = run_main(["compare", "torch_ref", "triton_grouped", "--device", "-1"], capsys)
    outcome.assert_refused()


@pytest.mark.parametrize("value", ["cpuu", "gpu", "cuda:1", "0"])
def test_a_forced_device_other_than_cpu_is_refused_before_any_work(value, monkeypatch, capsys):
    """A typo in GEMMREG_DEVICE would have timed the GPU the user meant to keep out."""
    forbid_work(monkeypatch)
    monkeypatch.setenv("GEMMREG_DEVICE", value)
    for argv in (["list"], ["check", "torch_ref"], ["bench", "torch_ref", "--shape", "8"]):
        outcome = run_main(argv, capsys)
        outcome.assert_refused()
        assert f"GEMMREG_DEVICE must be 'cpu' or unset, got {value!r}" in outcome.err


@pytest.mark.parametrize("value", ["cpu", " CPU ", ""])
def test_cpu_and_nothing_are_the_forced_device_values(value, monkeypatch):
    from gemmreg.contract import backend

    backend.check_force_env({"GEMMREG_DEVICE": value})
    assert backend.forced_cpu({"GEMMREG_DEVICE": value}) is (value != "")
    assert backend.gpu_likely({"GEMMREG_DEVICE": value}) is (value == "" and backend.gpu_likely({}))
