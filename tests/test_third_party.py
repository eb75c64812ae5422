"""A plugin package from outside the repository, installed with pip, gets its
matrix from one line of test code, and `gemmreg list` shows its origin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from offline_cli import run_main

PYPROJECT = """
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "tp-gemm"
version = "0.3.0"

[project.entry-points.gemmreg]
tp_gemm = "tp_gemm"
"""

PLUGIN = """
import gemmreg

CAPS = gemmreg.Capabilities(
    dtypes={"fp32"},
    backends={"cpu", "cuda", "rocm"},
    precision={"fp32": gemmreg.Precision(math="ieee_fp32", detail="torch.mm")},
    layouts={"rowmajor", "transposedB"},
)


def prepare(problem):
    import torch

    CAPS.require(problem)
    return lambda a, b, out: torch.mm(a, b, out=out)


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(gemmreg.KernelSpec(
        name="tp_gemm", summary="third-party test plugin", prepare=prepare, capabilities=CAPS,
        tolerances={"fp32": gemmreg.Tolerance(rtol=3e-5, atol=1e-6)},
    ))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("tp")
    package = root / "tp-gemm"
    (package / "tp_gemm").mkdir(parents=True)
    (package / "pyproject.toml").write_text(PYPROJECT)
    (package / "tp_gemm" / "__init__.py").write_text(PLUGIN)
    site = root / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(package),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("GEMMREG_EXTRA_PLUGINS", None)
    return root, env


def test_list_shows_the_package_and_version(installed, monkeypatch, capsys):
    """``gemmreg list`` in this process (a fresh one is a torch import), with
    the package's site on sys.path as PYTHONPATH puts it there for a process:
    discovery reads the installed entry point and its distribution's metadata."""
    root, _env = installed
    monkeypatch.syspath_prepend(str(root / "site"))
    monkeypatch.delenv("GEMMREG_EXTRA_PLUGINS", raising=False)
    monkeypatch.delenv("GEMMREG_PLUGINS", raising=False)
    done = run_main(["list", "--format", "json"], capsys)
    assert done.code == 0, done.err
    rows = {row["name"]: row for row in json.loads(done.out)["plugins"]}
    assert rows["tp_gemm"]["package"] == "tp-gemm 0.3.0"
    assert rows["tp_gemm"]["available"] is True


def test_one_line_of_test_code_runs_the_matrix(installed):
    root, env = installed
    test_file = root / "test_tp.py"
    test_file.write_text(
        textwrap.dedent("""
        from gemmreg.testing import matrix
        test_tp = matrix("tp_gemm")
    """)
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", str(test_file)],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "test_tp[tp_gemm-fp32-transposedB-17x19x23] PASSED" in done.stdout
    assert "test_tp[tp_gemm-fp32-rowmajor-65x64x64] PASSED" in done.stdout
    assert "test_tp[tp_gemm-fp16-rowmajor-17x19x23] SKIPPED" in done.stdout  # undeclared
    assert "tp_gemm-fp16-rowmajor-17x19x23-refuses-unsupported] PASSED" in done.stdout
    assert " failed" not in done.stdout.splitlines()[-1]
