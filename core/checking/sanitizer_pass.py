"""The sanitizer pass of ``gemmreg check --sanitize``: each plugin's small
subset (:func:`gemmreg.checking.matrix.sanitize_cases`) under each tool.

A sanitized process costs seconds to start (torch, plugins, the tool's own
start-up: about 8 s on the H200), so for each plugin and tool the whole
subset runs in one worker under the sanitizer, with its own raw log. A log
that reports nothing clears every case it covered. A log that reports
something (or that stops before its summary line) cannot say which case did
it, so each case it covered runs again alone, in its own sanitized process
with its own log: the findings are then the case's exactly
(:mod:`gemmreg.checking.sanitized_runs` runs one kernel under one tool).

The values are checked under the sanitizer too: a changed schedule can expose
a race through the numbers (the missing-barrier kernel's error went from 0 to
12.6 under racecheck on the H200). A case fails on a finding even when its
values are right.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
from gemmreg.checking import check_runner, check_shards, sanitizer_tools
from gemmreg.checking.check_runner import CaseResult
from gemmreg.checking.matrix import Case
from gemmreg.checking.sanitized_runs import SANITIZE_TASK_TIMEOUT_S, run_poisoned, run_tool
from gemmreg.contract import backend
from gemmreg.contract.task_kinds import SANITIZE, VALUES
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.workers import devices

Record = Callable[[CaseResult], None]


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
    (:func:`gemmreg.checking.check_shards.shard_kernels`): each kernel's
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
    manifest: dict[str, object],
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
