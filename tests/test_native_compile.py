"""gemmreg.testing.native_compile: a plugin test's script runs in a fresh
Python with Triton's interpreter off, its last line read as JSON; a failing
script fails the test with its stderr; no ptxas, and the test is skipped."""

from __future__ import annotations

import pytest
from gemmreg.commands import native_compiling
from gemmreg.testing import native_compile

SCRIPT = """
import json, os
print("noise first")
print(json.dumps({"interpret": os.environ.get("TRITON_INTERPRET")}))
"""


def test_the_script_runs_without_the_interpreter_and_its_last_line_is_the_result(monkeypatch):
    monkeypatch.setattr(native_compiling, "_ships_ptxas", lambda: True)
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # as gemmreg sets it here, with no GPU
    assert native_compile(SCRIPT) == {"interpret": None}


def test_a_failing_script_fails_with_its_stderr(monkeypatch):
    monkeypatch.setattr(native_compiling, "_ships_ptxas", lambda: True)
    with pytest.raises(AssertionError, match="ptxas said no"):
        native_compile("import sys; sys.exit('ptxas said no')")


def test_without_ptxas_the_calling_test_is_skipped(monkeypatch):
    monkeypatch.setattr(native_compiling, "_ships_ptxas", lambda: False)
    with pytest.raises(pytest.skip.Exception, match="no NVIDIA backend with ptxas"):
        native_compile(SCRIPT)
