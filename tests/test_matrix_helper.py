"""``gemmreg.testing.matrix`` before packaging (a KernelSpec passed directly)
and for a plugin that failed to load (its own error, not "unknown plugin").

The throwaway test files run in one fresh pytest process, as an author would run them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import TESTS

SPEC_MODULE = """
import gemmreg


def prepare(problem):
    import torch

    CAPS.require(problem)
    return lambda a, b, out: torch.mm(a, b, out=out)


CAPS = gemmreg.Capabilities(
    dtypes={"fp32"},
    backends={"cpu", "cuda", "rocm"},
    precision={"fp32": gemmreg.Precision(math="ieee_fp32", detail="torch.mm")},
)
SPEC = gemmreg.KernelSpec(
    name="NAME",
    summary="not packaged yet",
    prepare=prepare,
    capabilities=CAPS,
    tolerances={"fp32": gemmreg.Tolerance(rtol=3e-5, atol=1e-6)},
)
"""


def run_pytest(root, test_file: str, env: dict[str, str], extra=()):
    environment = {**os.environ, **env}
    files = [str(root / name) for name in (test_file, *extra)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *files],
        capture_output=True,
        text=True,
        env=environment,
        cwd=root,
        timeout=600,
    )
    return done.returncode, done.stdout


@pytest.fixture(scope="module")
def author_run(tmp_path_factory):
    """One pytest process (each imports torch and starts workers) over three
    throwaway test files, as an author would run them: a spec from a module of
    its own, a spec defined in the test module itself, and that first spec named
    beside a plugin that failed to load. Its exit code and its verbose report."""
    root = tmp_path_factory.mktemp("author")
    (root / "my_unpackaged.py").write_text(SPEC_MODULE.replace("NAME", "unpackaged_gemm"))
    (root / "test_unpackaged.py").write_text(
        textwrap.dedent("""
        from gemmreg.testing import matrix
        from my_unpackaged import SPEC

        test_spec = matrix(SPEC, dtypes=["fp32", "fp16"], layouts=["rowmajor"])
        """)
    )
    (root / "test_inline.py").write_text(
        SPEC_MODULE.replace("NAME", "inline_gemm")
        + "\nfrom gemmreg.testing import matrix\n\n"
        + 'test_inline = matrix(SPEC, dtypes=["fp32"], layouts=["rowmajor"])\n'
    )
    (root / "test_broken.py").write_text(
        textwrap.dedent("""
        from gemmreg.testing import matrix
        from my_unpackaged import SPEC

        test_broken = matrix("fake_bad_spec", SPEC, dtypes=["fp32"], layouts=["rowmajor"])
        """)
    )
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        "GEMMREG_PLUGINS": "none",
        "GEMMREG_EXTRA_PLUGINS": "fake_plugins.bad_spec",
    }
    return run_pytest(root, "test_unpackaged.py", env, extra=["test_inline.py", "test_broken.py"])


def _file_passed(out: str, test_file: str) -> bool:
    """Every test of ``test_file`` in a -v report passed or was skipped."""
    lines = [line for line in out.splitlines() if line.startswith(f"{test_file}::")]
    return bool(lines) and all(" PASSED" in line or " SKIPPED" in line for line in lines)


@pytest.mark.slow
def test_a_spec_not_yet_packaged_gets_its_matrix_in_worker_processes(author_run):
    _, out = author_run
    assert _file_passed(out, "test_unpackaged.py"), out[-3000:]
    assert "test_spec[unpackaged_gemm-fp32-rowmajor-17x19x23] PASSED" in out
    assert "test_spec[unpackaged_gemm-fp16-rowmajor-17x19x23] SKIPPED" in out  # undeclared
    assert "unpackaged_gemm-fp16-rowmajor-17x19x23-refuses-unsupported] PASSED" in out


@pytest.mark.slow
def test_a_spec_defined_in_the_test_module_itself_runs_too(author_run):
    _, out = author_run
    assert _file_passed(out, "test_inline.py"), out[-3000:]
    assert "test_inline[inline_gemm-fp32-rowmajor-65x67x69] PASSED" in out


def test_a_spec_held_nowhere_at_module_level_is_refused_when_the_test_is_declared():
    import gemmreg
    from gemmreg.testing import matrix

    def build():
        local = gemmreg.KernelSpec(
            name="nowhere",
            summary="a local variable",
            prepare=lambda problem: None,
            capabilities=gemmreg.Capabilities(
                dtypes={"fp32"},
                backends={"cpu"},
                precision={"fp32": gemmreg.Precision(math="ieee_fp32")},
            ),
            tolerances={"fp32": gemmreg.Tolerance(rtol=3e-5)},
        )
        return matrix(local)

    with pytest.raises(gemmreg.SpecError, match="module-level name"):
        build()


@pytest.mark.slow
def test_a_plugin_that_failed_to_load_fails_its_test_with_its_own_error(author_run):
    """Named beside a spec not yet packaged: each gets its own verdict."""
    code, out = author_run
    assert code == 1, out[-3000:]
    assert "test_broken[fake_bad_spec-not-loaded] FAILED" in out
    assert "test_broken[unpackaged_gemm-fp32-rowmajor-17x19x23] PASSED" in out
    failure = out[out.index("_ test_broken[fake_bad_spec-not-loaded] _") :]
    assert "plugin 'fake_bad_spec' failed to load: register: SpecError" in failure
    assert "field 'tolerances'" in failure and "unknown plugin" not in failure
    assert "1 failed" in out.splitlines()[-1]
