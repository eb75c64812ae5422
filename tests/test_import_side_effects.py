"""Importing gemmreg leaves the process as it was: Triton's interpreter is
switched on only where gemmreg runs kernels (its workers, ``run_fresh``'s
scripts, discovery), so another project's tests, in an environment where
gemmreg's pytest plugin loads into every session, keep their Triton."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gemmreg.testing import run_fresh


def _env_without_interpreter() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["GEMMREG_DEVICE"] = "cpu"  # the case that used to flip it: no GPU here
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    return env


def test_importing_gemmreg_and_its_pytest_plugin_sets_nothing():
    script = (
        "import json, os\n"
        "import gemmreg, gemmreg.testing, gemmreg.hookspecs\n"
        "gemmreg.Problem(m=1, n=1, k=1)\n"
        "print(json.dumps(os.environ.get('TRITON_INTERPRET')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=_env_without_interpreter(),
        check=True,
    )
    assert json.loads(done.stdout.splitlines()[-1]) is None


def test_another_projects_pytest_session_keeps_its_triton(tmp_path: Path):
    (tmp_path / "test_other_project.py").write_text(
        "import os\n\n"
        "def test_triton_as_this_project_set_it():\n"
        "    assert 'TRITON_INTERPRET' not in os.environ\n"
    )
    done = subprocess.run(
        # --gemmreg-level exists only if gemmreg's plugin loaded into this session
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--gemmreg-level=quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env_without_interpreter(),
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


def test_scripts_gemmreg_runs_kernels_in_are_interpreted_without_a_gpu(monkeypatch):
    monkeypatch.setenv("GEMMREG_DEVICE", "cpu")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    script = "import json, os; print(json.dumps(os.environ.get('TRITON_INTERPRET')))"
    assert run_fresh(script) == "1"
