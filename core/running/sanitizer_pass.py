"""The sanitizer pass of ``gemmreg check --sanitize``: each plugin's small
subset (:func:`gemmreg.deciding.matrix.sanitize_cases`) under each tool.

A sanitized process costs seconds to start (torch, plugins, the tool's own
start-up: about 8 s on the H200), so for each plugin and tool the whole
subset runs in one worker under the sanitizer, with its own raw log. A log
that reports nothing clears every case it covered. A log that reports
something (or that stops before its summary line) cannot say which case did
it, so each case it covered runs again alone, in its own sanitized process
with its own log: the findings are then the case's exactly.

The values are checked under the sanitizer too: a changed schedule can expose
a race through the numbers (the missing-barrier kernel's error went from 0 to
12.6 under racecheck on the H200). A case fails on a finding even when its
values are right.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
from gemmreg.contract import backend
from gemmreg.contract.task_kinds import SANITIZE, VALUES
from gemmreg.deciding import sanitizer_tools
from gemmreg.deciding.matrix import Case
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.judging.sanitizer_report import SanitizerReport, SanitizerVerdict, parse
from gemmreg.judging.tasks import Task
from gemmreg.running import check_runner, check_shards, devices, isolation
from gemmreg.running.check_runner import CaseResult

Record = Callable[[CaseResult], None]

SANITIZE_TASK_TIMEOUT_S = 600.0
"""A case under a sanitizer runs 10-100x slower than plain."""
POISON_NOTE = "shared memory filled with 0xFF (NaN) before each launch"


@attrs.define
class _Log:
    path: Path
    cases: list[int] = attrs.field(factory=list)
    """Positions (in the task list of that run) of the tasks this process settled."""


def run_pass(
    kernels: Sequence[RegisteredKernel],
    cases: Sequence[Case],
    tools: Sequence[str],
    backend_kind: str,
    log_dir: Path,
    on_result: Callable[[CaseResult], None] | None = None,
    executable: Path | None = None,
    task_timeout: float = SANITIZE_TASK_TIMEOUT_S,
    chosen: Sequence[devices.Device] | None = None,
) -> list[CaseResult]:
    """Every kernel's sanitize subset under every tool; a result per case and
    tool. With ``chosen`` (``check --devices``), the kernels are shared out
    among those GPUs as the check's batches are
    (:func:`gemmreg.running.check_shards.shard_kernels`): each kernel's
    sanitized workers pinned to one GPU, the results in the order of ``kernels``."""

    def run(kernel: RegisteredKernel, env: dict[str, str] | None, record: Record) -> None:
        sanitize_kernel(
            kernel, cases, tools, backend_kind, log_dir, record, executable, task_timeout, env
        )

    if chosen is not None:
        return check_shards.shard_kernels(kernels, chosen, run, on_result)
    results: list[CaseResult] = []

    def record(result: CaseResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    for kernel in kernels:
        run(kernel, None, record)
    return results


def sanitize_kernel(
    kernel: RegisteredKernel,
    cases: Sequence[Case],
    tools: Sequence[str],
    backend_kind: str,
    log_dir: Path,
    record: Record,
    executable: Path | None = None,
    task_timeout: float = SANITIZE_TASK_TIMEOUT_S,
    env: dict[str, str] | None = None,
) -> None:
    """One kernel's subset under every tool, in workers started with ``env``
    (a pinned GPU's; None: this process's)."""
    gpu = backend_kind != "cpu"
    skipped, planned = check_runner.plan(kernel, cases, gpu)
    runnable = [case for kind, case in planned if kind == VALUES]
    for tool in tools:
        for skip in skipped:
            if skip.kind == VALUES:
                record(attrs.evolve(skip, kind=SANITIZE, tool=tool))
        reason = sanitizer_tools.unavailable_reason(tool, backend_kind)
        if reason or not runnable:
            for case in runnable:
                record(_skip(kernel.name, case, tool, f"sanitizer pass skipped: {reason}"))
            continue
        if tool == sanitizer_tools.SMEM_POISON:
            run_poisoned(kernel.name, runnable, record, task_timeout, env)
        else:
            found = executable or sanitizer_tools.locate()
            assert found is not None  # unavailable_reason said it is there
            run_tool(kernel.name, runnable, tool, found, log_dir, record, task_timeout, env)


def run_pass_here(
    kernels: Sequence[RegisteredKernel],
    cases: Sequence[Case],
    tools: Sequence[str],
    out: Path | None,
    manifest: dict[str, Any],
    progress: Callable[[str], None],
    on_result: Callable[[CaseResult], None] | None = None,
    chosen: Sequence[devices.Device] | None = None,
) -> list[CaseResult]:
    """``check --sanitize``'s pass on this machine: a line for each reason a
    tool is skipped here, the raw logs under ``out/sanitizer`` (else a fresh
    temporary folder), and the pass in ``manifest`` when it is saved; with
    ``chosen`` (``--devices``), spread over those GPUs as the check was."""
    kind = backend.current().kind
    reasons = {tool: sanitizer_tools.unavailable_reason(tool, kind) for tool in tools}
    for reason in dict.fromkeys(r for r in reasons.values() if r):
        skipped = [t for t, r in reasons.items() if r == reason]
        which = "" if len(skipped) == len(tools) else f" ({', '.join(skipped)})"
        progress(f"sanitizer pass skipped{which}: {reason}")
    runnable = [t for t, r in reasons.items() if not r]
    log_dir = Path(".")
    if runnable:
        if out is not None:
            log_dir = out / "sanitizer"
        else:
            log_dir = Path(tempfile.mkdtemp(prefix="gemmreg-sanitize-"))
        executable = sanitizer_tools.locate()
        progress(f"sanitizer pass: {', '.join(runnable)}; raw logs in {log_dir}/")
        if out is not None:
            manifest["sanitizer"] = sanitizer_tools.manifest_entry(tools, executable)
    return run_pass(kernels, cases, tools, kind, log_dir, on_result=on_result, chosen=chosen)


def _skip(name: str, case: Case, tool: str, reason: str) -> CaseResult:
    return CaseResult(
        kernel=name, case=case, kind=SANITIZE, tool=tool, status="skip", reason=reason
    )


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
