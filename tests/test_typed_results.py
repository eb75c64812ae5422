"""Tasks and results are typed records across the worker boundary, named by
one vocabulary, and saved documents carry their schema version."""

from __future__ import annotations

import ast
import json
import math
import typing

import attrs
import pytest
from conftest import REPO
from gemmreg.checking import check_kinds, check_runner
from gemmreg.checking.matrix import Case
from gemmreg.commands import worker
from gemmreg.contract.records import Problem, Tolerance
from gemmreg.contract.task_kinds import BUILT_IN_CASE_KINDS, REFUSAL, TASK_KINDS, VALUES
from gemmreg.instruments.device_profile import DeviceProfile
from gemmreg.reporting import check_files, runs
from gemmreg.timing.rounds import Round
from gemmreg.timing.timing_records import CompareReport
from gemmreg.workers.task_results import (
    CaseAnswer,
    Comparison,
    KernelProfile,
    KernelTiming,
    ProfileResult,
    RefusalResult,
    RoundsResult,
    Soak,
    ValuesResult,
)
from gemmreg.workers.task_wire import encode, read_outcome, read_task
from gemmreg.workers.tasks import (
    CHECK_TASK_CLASSES,
    RESULT_TYPES,
    TASK_TYPES,
    CaseTask,
    ColdTask,
    ProfileTask,
    RefusalTask,
    RoundsTask,
    ValuesTask,
)
from offline_cli import forbid_work, run_main

PROBLEM = Problem(m=5, n=6, k=7, dtype="fp16", layout="transposedB")
TASKS = [
    ValuesTask(kernel="k", problem=PROBLEM, seed=3, values="mixed", poison_shared=True),
    RefusalTask(kernel="k", problem=PROBLEM),
    CaseTask(check="c", where="module:Kind", kernel="k", problem=PROBLEM, seed=3, values="mixed"),
    ColdTask(kernel="k", problem=PROBLEM, seed=3),
    RoundsTask(
        kernels=["a", "b"], problem=PROBLEM, seed=3, order_seed=9, gpu=True, repeats=4, l2="dirty"
    ),
    ProfileTask(kernels=["a"], problem=PROBLEM, seed=3),
]
FAILED = Comparison(
    passed=False,
    max_error=math.inf,
    max_abs_error=2.5,
    bad_count=1,
    total=30,
    first_bad=((0, 1, 2.5, 0.0),),
    reason="1/30 elements outside tolerance",
    tolerance=Tolerance(rtol=1e-3, why="fp16"),
    tolerance_used=2500.0,
)


def across(task, result):
    """``result`` sent by a worker for ``task``, as strict JSON, and read back."""
    line = json.dumps({"status": "ok", "result": encode(result)}, allow_nan=False)
    return read_outcome(task, json.loads(line))


def test_one_vocabulary_names_every_task_its_record_its_result_and_its_runner():
    # A check case's task is run by its check kind; every other by the worker's runner.
    check_tasks = {t.kind for t in CHECK_TASK_CLASSES}
    assert set(TASK_TYPES) == set(RESULT_TYPES) == set(TASK_KINDS)
    assert set(worker._RUNNERS) == set(TASK_KINDS) - check_tasks
    assert {t.kind for t in TASKS} == set(TASK_KINDS)
    assert check_kinds.names()[: len(BUILT_IN_CASE_KINDS)] == list(BUILT_IN_CASE_KINDS)
    hints = typing.get_type_hints(check_runner.CaseResult)
    assert hints["kind"] is str  # a registered kind's name: checked against the registry
    case = Case(problem=PROBLEM)
    assert check_runner.task_for("k", VALUES, case).kind == VALUES
    assert check_runner.task_for("k", REFUSAL, case).kind == REFUSAL


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.kind)
def test_a_task_reaches_the_worker_as_it_was_sent(task):
    line = json.dumps(encode(task), allow_nan=False)
    assert json.loads(line)["kind"] == task.kind
    assert read_task(json.loads(line)) == task


def test_a_task_of_a_kind_the_worker_does_not_know_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown task kind 'check'"):
        read_task({"kind": "check", "kernel": "k"})


def test_a_values_result_comes_back_typed_and_is_recorded_as_check_json_keeps_it():
    outcome = across(TASKS[0], ValuesResult.of(FAILED))
    assert outcome.status == "ok" and outcome.result == ValuesResult.of(FAILED)
    assert outcome.result.recorded() == {
        "passed": False,
        "max_error": math.inf,
        "max_abs_error": 2.5,
        "bad_count": 1,
        "total": 30,
        "first_bad": [[0, 1, 2.5, 0.0]],
        "nan_mismatch": 0,
        "reason": "1/30 elements outside tolerance",
        "tolerance": {"rtol": 1e-3, "atol": 0.0, "why": "fp16"},
        "tolerance_used": 2500.0,
    }
    changed = across(TASKS[0], ValuesResult(passed=False, reason="plugin changed global state"))
    assert changed.result.recorded() == {"passed": False, "reason": "plugin changed global state"}
    nan = attrs.evolve(FAILED, max_error=math.nan)
    assert math.isnan(across(TASKS[0], ValuesResult.of(nan)).result.comparison.max_error)


def test_timing_results_come_back_typed():
    refusal = RefusalResult(passed=True, reason="refused: UnsupportedProblem: fp16")
    assert across(TASKS[1], refusal).result == refusal
    answer = CaseAnswer(passed=False, reason="2 of 30 differ", comparison={"total": 30})
    assert across(TASKS[2], answer).result == answer
    cold = KernelTiming(status="failed", reason="precheck: wrong", prepare_s=0.5, precheck=FAILED)
    assert across(TASKS[3], cold).result == cold
    timed = KernelTiming(prepare_s=0.1, round_ms=(1.0, 1.5), placements=4, sync_escape="late")
    taken = Round(order=("a",), slot_ms={"a": 1.0}, slot_wall_s={"a": 0.02}, samples={"a": 3})
    rounds = RoundsResult(
        clock="cpu",
        l2=None,
        policy={"slot_s": 0.02},
        kernels={"a": timed, "b": KernelTiming(status="error", reason="RuntimeError: x")},
        soak=Soak(s=1.0, calls={"a": 2}, steady=True, sample_cost_s={"a": 0.01}),
        stop_reason="steady",
        rounds=(taken, attrs.evolve(taken, dropped="throttled")),
    )
    assert across(TASKS[4], rounds).result == rounds
    profile = DeviceProfile(
        calls=3, kernel_ms_per_call=1.0, busy_ms_per_call=1.0, launches_per_call=1.0, streams=[7]
    )
    profiles = ProfileResult(
        kernels={"a": KernelProfile(profile=profile), "b": KernelProfile(unavailable="no GPU")}
    )
    back = across(TASKS[5], profiles).result
    assert back == profiles
    assert back.recorded() == {
        "a": {"profile": profile.to_dict()},
        "b": {"profile_unavailable": "no GPU"},
    }


def test_a_result_that_does_not_fit_its_task_is_that_task_s_error_not_a_crash():
    outcome = read_outcome(TASKS[3], {"status": "ok", "result": {"pid": 12}})
    assert outcome.status == "error" and outcome.result is None
    assert outcome.error.startswith("unreadable cold result from the worker: TypeError")
    failed = read_outcome(TASKS[0], {"status": "error", "error": "E: x", "traceback": "tb"})
    assert (failed.status, failed.error, failed.traceback) == ("error", "E: x", "tb")


# ---------------------------------------------------------------------------
# Saved documents: one serializer, a schema version each
# ---------------------------------------------------------------------------


def small_report() -> CompareReport:
    from gemmreg.timing.timing_records import ProcessRun

    run = ProcessRun(kernel="k", process=0, status="error", reason="x")
    return CompareReport(
        problem=PROBLEM,
        processes=1,
        seed=1,
        clock="test",
        device_name="cpu",
        summaries=(),
        verdicts=(),
        runs=(run,),
    )


def test_a_saved_run_says_its_schema_and_one_from_a_newer_gemmreg_is_one_line_exit_2(
    tmp_path, monkeypatch, capsys
):
    runs.write_run(tmp_path, {}, [small_report()], partial=False)
    data = json.loads((tmp_path / runs.RUN_FILE).read_text())
    assert next(iter(data)) == "schema" and data["schema"] == runs.RUN_SCHEMA
    assert runs.load_run(tmp_path)[1] == [small_report()]
    for newer in ({**data, "schema": runs.RUN_SCHEMA + 1}, {**data, "reports": [{"schema": 99}]}):
        (tmp_path / runs.RUN_FILE).write_text(json.dumps(newer))
        with pytest.raises(runs.RunError, match="written by a newer gemmreg") as caught:
            runs.load_run(tmp_path)
        assert str(tmp_path / runs.RUN_FILE) in str(caught.value)
        assert "\n" not in str(caught.value)
    forbid_work(monkeypatch)
    outcome = run_main(["report", str(tmp_path)], capsys)
    outcome.assert_refused()
    assert "written by a newer gemmreg" in outcome.err
    (tmp_path / runs.RUN_FILE).write_text(json.dumps({**data, "schema": "2"}))
    with pytest.raises(runs.RunError, match="schema '2' is not one this gemmreg reads"):
        runs.load_run(tmp_path)


def test_a_saved_check_from_a_newer_gemmreg_is_refused_in_one_line(tmp_path):
    newer = {"schema": check_files.CHECK_SCHEMA + 1, "cases": []}
    (tmp_path / check_files.CHECK_FILE).write_text(json.dumps(newer))
    with pytest.raises(check_files.CheckFileError, match="written by a newer gemmreg"):
        check_files.load_check(tmp_path)


def test_records_do_not_import_the_inputs():
    """inputs builds on records (Problem, DType); records never reach back."""
    tree = ast.parse((REPO / "core" / "contract" / "records.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "gemmreg.contract.inputs" not in imported
