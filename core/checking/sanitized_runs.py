"""One kernel's cases under one tool, for the sanitizer pass
(:mod:`gemmreg.checking.sanitizer_pass`): under compute-sanitizer, the cases
in one shared process with its own raw log, and each case of a log that
reported something run again alone (:func:`run_tool`); under gemmreg's
smempoison, the ordinary check with shared memory poisoned before every
launch (:func:`run_poisoned`). Each case becomes a result whose status
weighs the tool's findings with the values'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
from gemmreg.checking import check_runner, sanitizer_tools
from gemmreg.checking.check_runner import CaseResult
from gemmreg.checking.matrix import Case
from gemmreg.checking.sanitizer_report import SanitizerReport, SanitizerVerdict, parse
from gemmreg.contract.task_kinds import SANITIZE, VALUES
from gemmreg.workers import isolation
from gemmreg.workers.tasks import Task

SANITIZE_TASK_TIMEOUT_S = 600.0
"""A case under a sanitizer runs 10-100x slower than plain."""
POISON_NOTE = "shared memory filled with 0xFF (NaN) before each launch"


@attrs.define
class _Log:
    path: Path
    cases: list[int] = attrs.field(factory=list)
    """Positions (in the task list of that run) of the tasks this process settled."""


def run_tool(
    name: str,
    cases: Sequence[Case],
    tool: str,
    executable: Path | str,
    log_dir: Path,
    record: Callable[[CaseResult], None],
    task_timeout: float = SANITIZE_TASK_TIMEOUT_S,
    env: dict[str, str] | None = None,
) -> None:
    """One compute-sanitizer tool over one kernel's cases: the shared process
    first, then each case of a log that reported something on its own."""
    tasks = [check_runner.values_task(name, case) for case in cases]
    stem = f"{name}-{tool}"
    outcomes, logs = _run_logged(tasks, tool, executable, log_dir, stem, task_timeout, env)
    for log in logs:
        report = read_log(log.path, tool)
        suspect = report.failed or not report.complete
        if suspect and len(log.cases) > 1 and not _never_started(outcomes, log.cases):
            for index in log.cases:
                case = cases[index]
                alone, single = _run_logged(
                    [tasks[index]],
                    tool,
                    executable,
                    log_dir,
                    f"{case.id(name)}-{tool}",
                    task_timeout,
                    env,
                )
                path = single[-1].path
                record(_result(name, case, tool, alone[0], read_log(path, tool), path, "case"))
            continue
        attribution = "case" if len(log.cases) == 1 else "group"
        for index in log.cases:
            record(
                _result(name, cases[index], tool, outcomes[index], report, log.path, attribution)
            )


def _run_logged(
    tasks: Sequence[Task],
    tool: str,
    executable: Path | str,
    log_dir: Path,
    stem: str,
    task_timeout: float,
    env: dict[str, str] | None,
) -> tuple[list[isolation.TaskOutcome], list[_Log]]:
    """Run tasks under the sanitizer; each worker process gets its own log file."""
    logs: list[_Log] = []
    log_dir.mkdir(parents=True, exist_ok=True)

    def prefix() -> list[str]:
        number = len(logs) + 1
        path = log_dir / (f"{stem}.log" if number == 1 else f"{stem}.{number}.log")
        path.unlink(missing_ok=True)
        logs.append(_Log(path=path))
        return sanitizer_tools.command(executable, tool, path)

    def settle(index: int, outcome: isolation.TaskOutcome) -> None:
        logs[-1].cases.append(index)  # the runner settles tasks of the worker it last started

    outcomes = isolation.run_tasks(
        tasks,
        task_timeout=task_timeout,
        on_outcome=settle,
        env=sanitizer_tools.worker_env(tool, env),
        command_prefix=prefix,
    )
    return outcomes, logs


def _never_started(outcomes: Sequence[isolation.TaskOutcome], indices: Sequence[int]) -> bool:
    """The process never came up: running each case alone would fail the same way."""
    return all(
        outcomes[i].status == "crashed" and "during start-up" in outcomes[i].error for i in indices
    )


def read_log(path: Path, tool: str) -> SanitizerReport:
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        return SanitizerReport(tool=tool, unparsed=(f"no log: {error}",))
    return parse(text, tool)


def _result(
    name: str,
    case: Case,
    tool: str,
    outcome: isolation.TaskOutcome,
    report: SanitizerReport,
    path: Path,
    attribution: str,
) -> CaseResult:
    base = check_runner.result_from_outcome(name, VALUES, case, outcome)
    verdict = SanitizerVerdict(
        tool=tool,
        report=report,
        raw_log=str(path),
        attribution="case" if attribution == "case" else "group",
    )
    status, reasons = base.status, []
    if verdict.failed:
        reasons.append(report.describe())
    if base.status in ("pass", "fail"):
        if verdict.failed:
            status = "fail"
        elif not report.complete:
            status = "error"
            reasons.append(
                f"{tool}: no summary line in the log; the process did not finish under the sanitizer"
            )
    if base.reason:
        label = f"values under {tool}: " if base.status == "fail" else ""
        reasons.append(label + base.reason)
    return attrs.evolve(
        base,
        kind=SANITIZE,
        tool=tool,
        status=status,
        reason="; ".join(reasons),
        sanitizer=verdict,
    )


def run_poisoned(
    name: str,
    cases: Sequence[Case],
    record: Callable[[CaseResult], None],
    task_timeout: float = SANITIZE_TASK_TIMEOUT_S,
    env: dict[str, str] | None = None,
) -> None:
    """gemmreg's smempoison: the ordinary check with the poison kernel enqueued
    before every launch; no sanitizer process, so one batch, no bisecting."""
    tasks = [check_runner.values_task(name, case, poison_shared=True) for case in cases]
    verdict = SanitizerVerdict(tool=sanitizer_tools.SMEM_POISON, note=POISON_NOTE)

    def settle(index: int, outcome: isolation.TaskOutcome) -> None:
        base = check_runner.result_from_outcome(name, VALUES, cases[index], outcome)
        reason = f"values under smempoison: {base.reason}" if base.status == "fail" else base.reason
        record(
            attrs.evolve(
                base,
                kind=SANITIZE,
                tool=sanitizer_tools.SMEM_POISON,
                reason=reason,
                sanitizer=verdict,
            )
        )

    isolation.run_tasks(
        tasks,
        task_timeout=task_timeout,
        on_outcome=settle,
        env=sanitizer_tools.worker_env(sanitizer_tools.SMEM_POISON, env),
    )
