"""An entry-point name two packages claim is settled before anything loads,
never by the order of ``sys.path``: a built-in's name stays the built-in's,
and a name two other packages claim loads for neither. Packages are fake
ones (:mod:`installed_dists`) put on ``sys.path`` here, as PYTHONPATH puts
them there for a process."""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import pytest
from gemmreg.discovery import plugin_names
from gemmreg.discovery.registry import discover
from installed_dists import install, spec_module
from offline_cli import run_main


def on_path(monkeypatch: pytest.MonkeyPatch, folder: Path, first: bool) -> None:
    """``folder`` on sys.path, ahead of site-packages or after it."""
    path = [str(folder), *sys.path] if first else [*sys.path, str(folder)]
    monkeypatch.setattr(sys, "path", path)
    importlib.invalidate_caches()


@pytest.mark.parametrize("first", [True, False])
def test_an_entry_point_named_as_a_built_in_cannot_take_its_place(
    fake_plugins, monkeypatch, tmp_path, first
):
    module = f"impostor_{int(first)}"
    install(tmp_path, "fake-x", {"torch_ref": f"{module}:SPEC"}, {module: spec_module("torch_ref")})
    on_path(monkeypatch, tmp_path, first)
    registry = discover(env={"GEMMREG_PLUGINS": "torch_ref"})
    kernel = registry.get("torch_ref")
    assert (kernel.origin.distribution, kernel.origin.module) == (
        "gemmreg",
        "gemmreg_plugins.torch_ref",
    )
    (issue,) = registry.issues
    assert (issue.origin.plugin, issue.origin.package, issue.stage) == (
        "torch_ref",
        "fake-x 0.1",
        "duplicate",
    )
    assert issue.reason == (
        "plugin name 'torch_ref' belongs to gemmreg's built-in plugin 'torch_ref' (gemmreg 0.1.0), "
        "which no package can replace; refused from plugin 'torch_ref' (fake-x 0.1) (not loaded)"
    )
    assert module not in sys.modules  # the impostor's code never ran


@pytest.mark.parametrize("first", [True, False])
def test_a_package_calling_itself_gemmreg_is_not_built_in(
    fake_plugins, monkeypatch, tmp_path, first
):
    """Its METADATA can say anything: built-in also takes a module of gemmreg's
    plugin package. Put ahead of gemmreg, it no longer hides gemmreg's own
    entry points either."""
    modules = {f"fake_gemmreg_{int(first)}": spec_module("torch_ref", "IMPOSTOR")}
    (module,) = modules
    entry_points = {"torch_ref": f"{module}:SPEC", "sneaky": f"{module}:SPEC"}
    install(tmp_path, "gemmreg", entry_points, modules, version="9.9")
    on_path(monkeypatch, tmp_path, first)
    registry = discover(env={"GEMMREG_PLUGINS": "torch_ref,sneaky"})
    kernel = registry.get("torch_ref")
    assert kernel.origin.built_in and kernel.origin.version == "0.1.0"
    assert kernel.spec.summary != "IMPOSTOR"
    reasons = {(i.origin.plugin, i.origin.version): i.reason for i in registry.issues}
    assert set(reasons) == {("torch_ref", "9.9"), ("sneaky", "9.9")}
    assert (
        "refused from plugin 'torch_ref' (gemmreg 9.9) (not loaded)" in reasons["torch_ref", "9.9"]
    )
    assert reasons["sneaky", "9.9"].startswith(
        "kernel name 'torch_ref' belongs to gemmreg's built-in plugin 'torch_ref' (gemmreg 0.1.0)"
    )


@pytest.mark.parametrize("reverse", [False, True])
def test_an_entry_point_name_two_packages_claim_loads_for_neither(
    fake_plugins, monkeypatch, tmp_path, reverse
):
    folders = []
    for dist, kernel in (("pkg-a", "kernel_a"), ("pkg-b", "kernel_b")):
        module = f"{kernel}_{int(reverse)}"
        folders.append(
            install(tmp_path / dist, dist, {"dup": f"{module}:SPEC"}, {module: spec_module(kernel)})
        )
    for folder in folders[:: -1 if reverse else 1]:
        on_path(monkeypatch, folder, first=True)
    registry = discover(env={"GEMMREG_PLUGINS": "dup"})
    assert not registry.kernels
    reasons = {i.origin.package: i.reason for i in registry.issues}
    assert {i.stage for i in registry.issues} == {"duplicate"}
    claimed = "plugin name 'dup' is claimed by pkg-a 0.1 and pkg-b 0.1: none of them was loaded; "
    assert reasons == {
        "pkg-a 0.1": claimed
        + "to load pkg-a 0.1's, block the other with GEMMREG_BLOCK_PLUGINS=pkg-b:dup",
        "pkg-b 0.1": claimed
        + "to load pkg-b 0.1's, block the other with GEMMREG_BLOCK_PLUGINS=pkg-a:dup",
    }
    picked = discover(env={"GEMMREG_PLUGINS": "dup", "GEMMREG_BLOCK_PLUGINS": "pkg-b:dup"})
    assert set(picked.kernels) == {"kernel_a"}
    assert [(i.origin.package, i.stage) for i in picked.issues] == [("pkg-b 0.1", "blocked")]


def test_naming_a_kernel_of_a_refused_entry_point_blames_the_clash(
    fake_plugins, monkeypatch, tmp_path, capsys
):
    for dist in ("pkg-a", "pkg-b"):
        module = f"{dist.replace('-', '_')}_mod"
        install(tmp_path / dist, dist, {"dup": f"{module}:SPEC"}, {module: spec_module(dist)})
        on_path(monkeypatch, tmp_path / dist, first=True)
    monkeypatch.setenv("GEMMREG_PLUGINS", "dup,torch_ref")
    monkeypatch.delenv("GEMMREG_EXTRA_PLUGINS", raising=False)
    listed = run_main(["list", "--format", "json"], capsys)
    assert listed.code == 0, listed.err
    rows = json.loads(listed.out)["plugins"]
    assert sorted((r["name"], r["package"], r.get("broken")) for r in rows) == [
        ("dup", "pkg-a 0.1", "duplicate"),
        ("dup", "pkg-b 0.1", "duplicate"),
        ("torch_ref", "gemmreg 0.1.0", None),
    ]
    done = run_main(["check", "dup"], capsys)
    done.assert_refused()
    assert done.err.startswith(
        "gemmreg: error: plugin 'dup' failed to load: duplicate: plugin name 'dup'"
    )


def test_one_package_found_twice_on_the_path_counts_once(monkeypatch, tmp_path):
    """An egg-info beside an editable install names the same entry points again."""
    for folder in ("one", "two"):
        install(tmp_path / folder, "pkg-twice", {"twice": "twice_mod:SPEC"})
        on_path(monkeypatch, tmp_path / folder, first=True)
    found = [ep for ep in plugin_names.installed("gemmreg") if ep.name == "twice"]
    assert len(found) == 1
