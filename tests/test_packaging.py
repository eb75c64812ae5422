"""What the package metadata promises a user installing gemmreg: NVML where
NVIDIA ships Linux drivers (the clock-aware timing reads it), a TOML reader
where Python has none, every plugin's own page shipped beside its code, and
a main job that installs only what it runs (the dev tools are the tests')."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib")
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def _dependency(name: str) -> str:
    found = [d for d in PROJECT["project"]["dependencies"] if re.match(rf"{name}\b", d)]
    assert len(found) == 1, f"{name} is not a dependency"
    return found[0]


def test_nvml_comes_with_gemmreg_on_linux_x86_64_and_aarch64():
    marker = _dependency("nvidia-ml-py").split(";", 1)[1]
    assert "sys_platform == 'linux'" in marker
    assert "'x86_64'" in marker and "'aarch64'" in marker


def test_a_toml_reader_comes_where_python_has_none():
    assert _dependency("tomli").split(";", 1)[1].strip() == "python_version < '3.11'"


def test_every_plugin_page_ships_beside_its_code():
    data = PROJECT["tool"]["setuptools"]["package-data"]
    for page in (REPO / "plugins").glob("*/README.md"):
        assert "README.md" in data.get(f"gemmreg_plugins.{page.parent.name}", ()), page


def test_the_main_job_installs_no_dev_tools_and_the_tests_do():
    main = (REPO / "scripts" / "main.sh").read_text()
    tests = (REPO / "scripts" / "test.sh").read_text()
    assert re.search(r"^scripts/bootstrap\.sh$", main, re.M)
    assert re.search(r"^scripts/bootstrap\.sh dev$", tests, re.M)
    bootstrap = (REPO / "scripts" / "bootstrap.sh").read_text()
    assert 'dev) extras="[dev]"' in bootstrap and '-e ".$extras"' in bootstrap
