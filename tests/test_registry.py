"""Discovery: every plugin through entry points, failures as rows, env switches."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest
from conftest import BUILT_INS
from gemmreg.discovery.registry import PluginNotLoadedError, UnknownKernelError, discover


def fake_entry_points(*modules: str) -> list[EntryPoint]:
    return [EntryPoint(name=m, value=f"fake_plugins.{m}", group="gemmreg") for m in modules]


def test_the_built_ins_come_in_through_installed_entry_points():
    registry = discover(env={})
    assert set(registry.kernels) >= set(BUILT_INS)
    for name in BUILT_INS:
        origin = registry.get(name).origin
        assert origin.plugin == name
        assert origin.distribution == "gemmreg"
        assert origin.version
    assert not registry.issues


def test_a_plugin_that_fails_to_import_is_a_row_and_the_others_load(fake_plugins):
    registry = discover(env={}, entry_points=fake_entry_points("broken_import", "good"))
    assert "fake_good" in registry.kernels
    (issue,) = registry.issues
    assert issue.origin.plugin == "broken_import"
    assert issue.stage == "import"
    assert "gemmreg_dependency_that_does_not_exist" in issue.reason


def test_a_nonsense_declaration_is_a_row_naming_the_field(fake_plugins):
    registry = discover(env={}, entry_points=fake_entry_points("bad_spec", "good"))
    assert set(registry.kernels) == {"fake_good"}
    (issue,) = registry.issues
    assert issue.stage == "register"
    assert "fake_bad_spec" in issue.reason
    assert "field 'tolerances'" in issue.reason


def test_a_hook_with_an_unknown_argument_is_a_row(fake_plugins):
    registry = discover(env={}, entry_points=fake_entry_points("bad_hook", "good"))
    assert set(registry.kernels) == {"fake_good"}
    (issue,) = registry.issues
    assert issue.stage == "hook"
    assert "no_such_argument" in issue.reason


def test_a_duplicate_name_is_refused_naming_both_plugins(fake_plugins):
    registry = discover(env={}, extra_plugins=["fake_plugins.duplicate"])
    assert registry.get("torch_ref").origin.plugin == "torch_ref"
    (issue,) = registry.issues
    assert issue.stage == "duplicate"
    assert "'torch_ref'" in issue.reason
    assert "gemmreg 0.1.0" in issue.reason
    assert "fake_plugins.duplicate" in issue.reason


def test_only_and_block_switches_limit_the_plugins():
    only = discover(env={"GEMMREG_PLUGINS": "torch_ref,triton_grouped"})
    assert set(only.kernels) == {"torch_ref", "triton_grouped"}
    blocked = discover(env={"GEMMREG_BLOCK_PLUGINS": "hip_naive"})
    assert "hip_naive" not in blocked.kernels
    assert [(i.origin.plugin, i.stage) for i in blocked.issues] == [("hip_naive", "blocked")]


def test_naming_a_plugin_that_is_not_installed_is_reported():
    registry = discover(env={"GEMMREG_PLUGINS": "torch_ref,no_such_plugin"})
    assert set(registry.kernels) == {"torch_ref"}
    assert [(i.origin.plugin, i.stage) for i in registry.issues] == [("no_such_plugin", "missing")]


def test_trace_switch_shows_hook_calls(capsys):
    discover(env={"GEMMREG_PLUGINS": "torch_ref", "GEMMREG_TRACE_PLUGINS": "1"})
    err = capsys.readouterr().err
    assert "calling gemmreg_register_kernels on [torch_ref]" in err


def test_unknown_names_list_the_known_ones():
    registry = discover(env={"GEMMREG_PLUGINS": "torch_ref"})
    with pytest.raises(UnknownKernelError, match=r"unknown plugin 'nope' \(known: torch_ref\)"):
        registry.select(["nope"])


def test_importing_plugins_is_cheap_and_does_not_import_triton():
    code = (
        "import sys, gemmreg_plugins.triton_grouped, gemmreg_plugins.hip_tiled, "
        "gemmreg_plugins.hip_regtiled; "
        "print('triton' in sys.modules, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def spec_entry_points(**values: str) -> list[EntryPoint]:
    return [
        EntryPoint(name=name, value=f"fake_plugins.{value}", group="gemmreg")
        for name, value in values.items()
    ]


def test_one_module_gives_kernels_separate_entry_point_names_through_its_specs(fake_plugins):
    """The supported way around pluggy registering one object once (hookspecs)."""
    points = spec_entry_points(fast="two_specs:FAST", small="two_specs:SMALL")
    registry = discover(env={}, entry_points=points)
    assert not registry.issues
    assert registry.get("fake_fast").origin.plugin == "fast"
    assert registry.get("fake_small").origin.plugin == "small"
    blocked = discover(env={"GEMMREG_BLOCK_PLUGINS": "small"}, entry_points=points)
    assert set(blocked.kernels) == {"fake_fast"}
    both = discover(env={}, entry_points=spec_entry_points(both="two_specs:KERNELS"))
    assert set(both.kernels) == {"fake_fast", "fake_small"}
    assert {k.origin.plugin for k in both.kernels.values()} == {"both"}


def test_two_entry_points_naming_one_module_say_what_to_do_instead(fake_plugins):
    registry = discover(env={}, entry_points=spec_entry_points(first="good", second="good"))
    assert registry.get("fake_good").origin.plugin == "first"
    (issue,) = registry.issues
    assert (issue.origin.plugin, issue.stage) == ("second", "hook")
    assert "already registered as plugin 'first'" in issue.reason
    assert 'second = "fake_plugins.good:SPEC"' in issue.reason


def test_a_spec_named_in_the_extra_plugins_switch_loads(fake_plugins):
    registry = discover(
        env={"GEMMREG_EXTRA_PLUGINS": "fake_plugins.two_specs:SMALL"}, entry_points=[]
    )
    assert set(registry.kernels) == {"fake_small"}


def test_a_kernel_whose_declaration_was_refused_is_reported_by_its_own_name(fake_plugins):
    registry = discover(env={}, entry_points=fake_entry_points("bad_spec", "good"))
    with pytest.raises(PluginNotLoadedError) as raised:
        registry.get("fake_bad_spec")
    message = str(raised.value)
    assert message.startswith("plugin 'fake_bad_spec' failed to load: register: SpecError")
    assert "field 'tolerances'" in message


def test_an_unknown_name_lists_the_plugins_that_failed_before_naming_their_kernels(
    fake_plugins,
):
    registry = discover(env={}, entry_points=fake_entry_points("broken_import", "good"))
    with pytest.raises(UnknownKernelError) as raised:
        registry.get("fake_broken")
    message = str(raised.value)
    assert message.startswith("unknown plugin 'fake_broken' (known: fake_good)")
    assert "plugin 'broken_import'" in message and "import: ModuleNotFoundError" in message
