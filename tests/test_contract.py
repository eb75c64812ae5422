"""Meta-tests that keep the contract honest."""

from __future__ import annotations

import inspect
import re

from conftest import BUILT_INS, REPO
from gemmreg import hookspecs


def hook_names():
    return [
        name
        for name, _ in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("gemmreg_")
    ]


def test_every_hook_is_documented_in_its_spec_and_the_readme():
    readme = (REPO / "README.md").read_text()
    assert hook_names()
    for name in hook_names():
        function = getattr(hookspecs, name)
        doc = inspect.getdoc(function) or ""
        assert ":param" in doc and ":returns:" in doc, name
        assert name in readme, f"{name} is not in README.md"


def test_the_core_never_names_a_plugin():
    pattern = re.compile("|".join(["gemmreg_plugins", *BUILT_INS]))
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "core").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not offenders, offenders


def test_the_readme_figures_are_the_evidence_files_verbatim():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(REPO / "scripts" / "readme_evidence.py"), "--check"])
    assert done.returncode == 0, "README.md is stale: run python scripts/readme_evidence.py"
