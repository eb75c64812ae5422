"""A plugin's import may not change gemmreg's own process: the environment
its workers inherit, the working directory a relative ``--out`` is written
to, ``sys.path``, the handlers that let Ctrl-C and ``kill`` end gemmreg.
Whatever it changed is put back and the plugin refused with one line, as one
that changes torch's state is; the plugins after it load as if it never ran."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import attrs
import pytest
from conftest import run_gemmreg
from gemmreg.discovery import process_state
from gemmreg.discovery.registry import discover
from test_hostile_plugins import WAIT_S, _hung_worker, plugin_env

CHANGES = {
    "sets_environment_at_import": "environment variable GEMMREG_BLOCK_PLUGINS set",
    "changes_directory_at_import": "working directory ",
    "trims_sys_path_at_import": "sys.path ",
    "ignores_termination_at_import": "SIGTERM handler ignored (was ",
}


@pytest.mark.parametrize("module", sorted(CHANGES))
def test_a_plugin_changing_the_process_at_import_is_refused_and_the_change_put_back(
    fake_plugins, monkeypatch, module
):
    monkeypatch.delenv("GEMMREG_BLOCK_PLUGINS", raising=False)
    before = process_state.current()
    registry = discover(
        extra_plugins=[f"fake_plugins.{module}:SPEC", "fake_plugins.good"],
        env={"GEMMREG_PLUGINS": "none"},
    )
    assert process_state.differences(process_state.current(), before) == []
    assert set(registry.kernels) == {"fake_good"}  # the plugin after it loaded
    (issue,) = registry.issues
    assert (issue.origin.plugin, issue.stage) == (f"fake_plugins.{module}:SPEC", "state")
    assert issue.reason.startswith("changed gemmreg's process state while loading: ")
    assert CHANGES[module] in issue.reason
    assert issue.reason.endswith("(put back; no kernel from this plugin was registered)")
    assert "\n" not in issue.reason


def test_differences_name_each_change_without_the_environment_s_values(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path / "only-here")])
    before = process_state.current()
    monkeypatch.setenv("FAKE_SECRET", "hunter2")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", sys.path[:-1])  # an entry sys.path holds once, gone
    found = process_state.differences(process_state.current(), before)
    assert found == [
        "environment variable FAKE_SECRET set",
        f"working directory {tmp_path} (was {before.cwd})",
        "sys.path 1 entries removed, 0 added",
    ]


def test_a_plugin_that_ignored_sigterm_at_import_cannot_keep_gemmreg_running(tmp_path):
    """A check whose worker hangs, with a plugin loaded that set SIGTERM and
    SIGHUP to be ignored: SIGTERM still ends it, with 143."""
    env = plugin_env("ignores_termination_at_import", "misbehaving", FAKE_KERNELS="fake_hang")
    command = [sys.executable, "-m", "gemmreg", "check", "fake_hang", "--dtype", "fp32"]
    proc, _worker = _hung_worker(tmp_path, command, env)
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("SIGTERM was ignored")
    assert code == 143
    assert "gemmreg: terminated by SIGTERM; workers killed" in proc.stderr.read()


def test_a_plugin_blocking_another_at_import_does_not_block_it_in_the_workers():
    """The workers inherit gemmreg's environment: had the plugin's change
    stayed, every case of the kernel it blocked would be an error there."""
    env = plugin_env("sets_environment_at_import:SPEC", "good")
    done = run_gemmreg("check", "fake_good", "--dtype", "fp32", "--format", "json", env=env)
    cases = json.loads(done.stdout)["cases"]
    assert cases and not [c for c in cases if c["status"] == "error"]
    (warning,) = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert "environment variable GEMMREG_BLOCK_PLUGINS set (put back" in warning


def test_torch_setting_cuda_module_loading_on_first_cuda_use_is_not_a_change():
    """torch sets CUDA_MODULE_LOADING=LAZY, when unset, as it first initialises
    CUDA: a plugin whose import is the first to touch the GPU must not be
    refused for it. Changing a value it already had still is a change."""
    before = process_state.current()
    without = {k: v for k, v in before.environ.items() if k != "CUDA_MODULE_LOADING"}
    unset = attrs.evolve(before, environ=without)
    lazy = attrs.evolve(before, environ={**without, "CUDA_MODULE_LOADING": "LAZY"})
    eager = attrs.evolve(before, environ={**without, "CUDA_MODULE_LOADING": "EAGER"})
    assert process_state.differences(lazy, unset) == []
    assert process_state.differences(eager, lazy) == [
        "environment variable CUDA_MODULE_LOADING changed"
    ]
    other = {**without, "GEMMREG_NOT_A_TORCH_VARIABLE": "1"}
    assert process_state.differences(attrs.evolve(before, environ=other), unset) == [
        "environment variable GEMMREG_NOT_A_TORCH_VARIABLE set"
    ]
