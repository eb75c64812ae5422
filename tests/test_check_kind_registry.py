"""A check kind is a registered unit (:mod:`gemmreg.checking.check_kinds`):
one that gemmreg does not ship, registered here alone, runs through
``gemmreg check`` as the built-in kinds do, in worker processes that never
registered it, and shows in the table and the saved check."""

from __future__ import annotations

import json

import pytest
from conftest import only_extra_plugins
from fake_plugins.determinism import Determinism
from gemmreg import cli
from gemmreg.checking import check_kinds, check_runner
from gemmreg.checking.matrix import Case
from gemmreg.contract.records import Problem
from gemmreg.reporting import check_files


def test_the_built_in_kinds_are_registered_in_the_matrix_s_order():
    assert check_kinds.names()[:3] == ["values", "refusal", "sanitize"]
    assert [k.name for k in check_kinds.in_matrix()] == ["values", "refusal"]  # sanitize: its pass
    with pytest.raises(ValueError, match="registered already"):
        check_kinds.register(type(check_kinds.get("values")))
    with pytest.raises(ValueError, match="unknown check kind 'nope'"):
        check_kinds.get("nope")


@pytest.fixture
def determinism():
    check_kinds.register(Determinism)
    yield
    check_kinds.unregister(Determinism.name)


def test_a_registered_kind_plans_its_cases_and_builds_the_generic_task(determinism):
    with only_extra_plugins(["fake_plugins.good"]):
        from gemmreg.discovery.registry import discover

        kernel = discover().get("fake_good")
    cases = [
        Case(problem=Problem(m=5, n=6, k=7)),
        Case(problem=Problem(m=5, n=6, k=7, dtype="bf16")),
    ]
    skipped, runnable = check_runner.plan(kernel, cases, gpu=False)
    assert [kind for kind, _ in runnable] == ["values", "refusal", "determinism"]
    assert [(r.kind, r.status) for r in skipped] == [("values", "skip"), ("determinism", "skip")]
    task = check_runner.task_for("fake_good", "determinism", cases[0])
    assert (task.kind, task.check) == ("case", "determinism")
    assert task.where == "fake_plugins.determinism:Determinism"


def test_a_kind_registered_in_the_test_alone_runs_through_gemmreg_check(
    determinism, tmp_path, capsys
):
    out = tmp_path / "out"
    argv = ["check", "fake_good", "fake_drifts", "--dtype", "fp32", "--layout", "rowmajor"]
    with only_extra_plugins(["fake_plugins.good", "fake_plugins.determinism"]):
        code = cli.main([*argv, "--out", str(out)])
    table = capsys.readouterr().out
    assert code == 1  # fake_drifts is not deterministic
    saved = json.loads((out / "check.json").read_text())["cases"]
    by = {(c["kernel"], c["kind"]): set() for c in saved}
    for c in saved:
        by[c["kernel"], c["kind"]].add(c["status"])
    assert by["fake_good", "determinism"] == {"pass"}
    assert by["fake_drifts", "values"] == {"pass"}  # within tolerance: the values check passes it
    assert by["fake_drifts", "determinism"] == {"fail"}  # every case ran, every one caught
    assert "1 of 1 elements differ between two calls" in table  # the 1x1x1 case's row
    assert "fp32-rowmajor-1x1x1-determinism" in table  # its id, by the kind
    assert "fp32 cases (determinism)" in table  # fake_good's passing cases, grouped
    results, partial = check_files.load_check(out)  # saved and read back while registered
    assert not partial and {r.kind for r in results} == {"values", "refusal", "determinism"}


def test_a_saved_case_of_an_unregistered_kind_is_refused_in_one_line(tmp_path):
    saved = {
        "schema": check_files.CHECK_SCHEMA,
        "cases": [
            {
                "kernel": "k",
                "case": {"problem": {"m": 1, "n": 1, "k": 1}},
                "status": "pass",
                "kind": "determinism",
            }
        ],
    }
    (tmp_path / "check.json").write_text(json.dumps(saved))
    with pytest.raises(check_files.CheckFileError) as error:
        check_files.load_check(tmp_path)
    assert (
        "cases[0].kind: expected one of 'values', 'refusal', 'sanitize', got 'determinism'"
        in str(error.value)
    )
