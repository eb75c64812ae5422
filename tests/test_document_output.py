"""stdout holds exactly what gemmreg printed: a plugin's thread that keeps
writing after its import cannot break ``--format json`` or ``csv``, and its
lines go to stderr; the human table still reaches stdout."""

from __future__ import annotations

import csv
import io
import json
import os
import sys

import pytest
from conftest import run_gemmreg
from gemmreg.commands import document_output
from test_hostile_plugins import WAIT_S, plugin_env

ENV = plugin_env("chatty_thread:SPEC", "good")
LINE = "chatty thread says hello"  # what tests/fake_plugins/chatty_thread.py writes


def test_check_json_parses_with_a_chatty_plugin_thread():
    done = run_gemmreg(
        "check", "fake_good", "--dtype", "fp32", "--format", "json", env=ENV, timeout=WAIT_S
    )
    assert LINE not in done.stdout
    assert json.loads(done.stdout)["cases"]
    assert LINE in done.stderr


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_list_output_is_gemmreg_s_alone(fmt):
    done = run_gemmreg("list", "--format", fmt, env=ENV, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    if fmt == "json":  # what plugins printed while loading is a row's "output": the rest is ours
        rows = json.loads(done.stdout)["plugins"]
        assert LINE not in json.dumps([{**row, "output": ""} for row in rows])
        names = {row["name"] for row in rows}
    elif fmt == "csv":
        assert LINE not in done.stdout
        names = {row["name"] for row in csv.DictReader(io.StringIO(done.stdout))}
    else:
        assert LINE not in done.stdout
        names = {line.split()[0] for line in done.stdout.splitlines()[2:] if line.strip()}
    assert {"fake_good", "fake_chatty"} <= names


def test_stray_writes_go_to_stderr_and_everything_is_put_back(capfd):
    stdout = sys.stdout
    with document_output.kept_apart():
        document_output.emit("the document")
        print("stray print")
        os.write(1, b"stray fd write\n")
    assert sys.stdout is stdout
    print("after")
    out, err = capfd.readouterr()
    assert out == "the document\nafter\n"
    assert "stray print\n" in err and "stray fd write\n" in err
