"""``gemmreg.testing.verdict``: a speed verdict as a test assertion. On this
CPU machine the default is a skip with its reason (no GPU: no verdict that
says anything about a kernel's speed); ``allow_cpu=True`` takes the verdict
through the whole protocol, and a pair that runs unlike (the interpreter
against native code) is a skip with the comparison's own reason."""

from __future__ import annotations

import pytest
from conftest import only_extra_plugins
from gemmreg.contract import backend
from gemmreg.testing import verdict
from gemmreg.timing.timing_records import Verdict

WORDS = ("faster", "slower", "equivalent", "inconclusive", "invalid")


@pytest.mark.skipif(backend.gpu_likely(), reason="a GPU device node is here")
def test_no_gpu_is_a_skip_with_the_reason_and_no_work():
    with pytest.raises(pytest.skip.Exception, match="no GPU here"):
        verdict("twin_b", "twin_a", shape="32x32x32")


@pytest.mark.slow
def test_allowed_on_the_cpu_the_verdict_comes_back_typed():
    with only_extra_plugins(["timing_plugins.twins"]):
        found = verdict("twin_b", "twin_a", shape="32x32x32", processes=3, allow_cpu=True)
    assert isinstance(found, Verdict)
    assert (found.kernel, found.baseline) == ("twin_b", "twin_a")
    assert found.verdict in WORDS and found.speedup is not None
    assert found.not_slower == (found.verdict in ("faster", "equivalent"))
    assert found.faster == (found.verdict == "faster")


@pytest.mark.slow
def test_unlike_execution_is_a_skip_with_the_comparisons_reason():
    with pytest.raises(pytest.skip.Exception, match="no verdict"):
        verdict("triton_grouped", "torch_ref", shape="16x16x16", processes=2, allow_cpu=True)


@pytest.mark.skipif(backend.gpu_likely(), reason="a GPU device node is here")
def test_the_ci_example_in_the_docs_runs_and_skips_with_its_reason(tmp_path):
    import re
    import subprocess
    import sys

    from conftest import REPO

    (code,) = re.findall(r"```py\n(.*?)```", (REPO / "docs" / "api.md").read_text(), re.S)
    (tmp_path / "test_speed.py").write_text(code)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "test_speed.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "2 skipped" in done.stdout and "no GPU here" in done.stdout
