"""``compare --ncu`` / ``--nsys``: one kernel of a comparison, after its
timing, in a fresh worker under Nsight Compute or Nsight Systems, with the
comparison's problem and seed (so its inputs are the ones timed). The tool's
report and a CSV summary of it are kept in the run folder, under
``profiler/``, and the manifest says what ran (:func:`run_profiler`).

The worker is the ordinary one, started under the tool exactly as the
sanitizer pass starts its workers under compute-sanitizer (a command prefix,
:func:`gemmreg.workers.isolation.run_tasks`); the task is a capture
(:func:`gemmreg.timing.profiling.capture_calls`): the kernel's prepare and
warm-up outside the profiled range, a warm call inside it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Required, TypedDict

from gemmreg.contract.records import Problem
from gemmreg.timing import profiler_tools
from gemmreg.workers import isolation
from gemmreg.workers.task_results import ProfileResult
from gemmreg.workers.tasks import ProfileTask

PROFILER_DIR = "profiler"
"""The folder of a run that holds the profilers' reports and summaries."""
SUMMARY_TIMEOUT_S = 300.0
"""Reading a report back into a summary; a large nsys report takes a while."""


class ProfilerEntry(TypedDict, total=False):
    """The manifest's record of one profiler run (:func:`run_profiler`)."""

    tool: Required[str]
    kernel: Required[str]
    status: str
    """``ok``, ``error`` or ``mismatch``."""
    reason: str
    problem: str
    seed: int
    executable: str
    version: str
    command: list[str]
    files: dict[str, str]
    """Its files by role (report, summary, log), relative to the run's folder."""
    profiled_kernels: list[str]
    timed_kernels: list[str]
    kernels_checked: str


def run_profiler(
    tool: str,
    kernel: str,
    problem: Problem,
    seed: int,
    run_dir: Path,
    executable: Path | None = None,
    task_timeout: float = profiler_tools.PROFILER_TASK_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    timed_kernels: Sequence[str] = (),
    per_point: bool = False,
) -> ProfilerEntry:
    """Run ``kernel`` under ``tool``; its files go to ``run_dir/profiler``.
    Returns the manifest's record of it: the command, the files (relative to
    ``run_dir``), and ``status`` ``ok``, ``error`` with the reason, or
    ``mismatch`` when the kernels profiled are not ``timed_kernels`` (the
    device kernels the timed calls launched; empty: not known, not checked).

    ``env``: the worker's environment (default: this process's), which the
    caller gives the timed processes' GPU and caches, so a plugin that tunes
    finds the choice it timed instead of tuning again under the profiler.
    ``per_point``: the files' names carry the problem's label (a sweep's
    points each get their own)."""
    found = executable or profiler_tools.locate(tool)
    if found is None:  # the command checked before any work; a tool gone since
        return {"tool": tool, "kernel": kernel, "status": "error", "reason": f"{tool} not found"}
    out_dir = run_dir / PROFILER_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    point = problem.label if per_point else ""
    report = profiler_tools.report_path(out_dir, tool, kernel, point)
    stem = profiler_tools.file_stem(tool, kernel, point)
    log, summary = out_dir / f"{stem}.log", out_dir / f"{stem}.csv"
    for stale in (report, log, summary):
        stale.unlink(missing_ok=True)
    prefix = profiler_tools.command(tool, found, report, log)
    task = ProfileTask(kernels=(kernel,), problem=problem, seed=seed, capture=True)
    outcome = isolation.run_tasks(
        [task],
        task_timeout=task_timeout,
        env={**(os.environ if env is None else env), profiler_tools.PROFILING_ENV: tool},
        command_prefix=lambda: prefix,
    )[0]
    files: dict[str, str] = {}
    entry: ProfilerEntry = {
        "tool": tool,
        "kernel": kernel,
        "problem": problem.label,
        "seed": seed,
        "executable": str(found),
        "version": profiler_tools.version(found),
        "command": prefix,
        "files": files,
    }
    reasons = [_why_not_captured(outcome, kernel)]
    if report.is_file():
        reasons.append(_summarize(tool, found, report, summary))
    else:
        reasons.append(f"{tool} wrote no report ({report.name})")
    for role, path in (("report", report), ("summary", summary), ("log", log)):
        if path.is_file():
            files[role] = str(path.relative_to(run_dir))
    problems = [r for r in reasons if r]
    entry["status"] = "error" if problems else "ok"
    entry["reason"] = "; ".join(problems)
    if not problems:
        _check_kernels(entry, tool, summary, timed_kernels)
    return entry


def _check_kernels(entry: ProfilerEntry, tool: str, summary: Path, timed: Sequence[str]) -> None:
    """Record the kernels the profile captured beside those the timing saw,
    and mark the entry ``mismatch`` when they differ."""
    profiled = profiler_tools.profiled_kernels(tool, summary.read_text())
    entry["profiled_kernels"] = profiled
    entry["timed_kernels"] = list(timed)
    if not timed:
        entry["kernels_checked"] = "no: the timing recorded no device kernels (no device profile)"
        return
    why = profiler_tools.kernels_mismatch(profiled, timed)
    entry["kernels_checked"] = "yes"
    if why:
        entry["status"], entry["reason"] = "mismatch", why


def _why_not_captured(outcome: isolation.TaskOutcome, kernel: str) -> str:
    """Empty when the worker ran the kernel's calls in the profiled range."""
    if outcome.status != "ok":
        first = (outcome.error or outcome.status).strip().splitlines()
        return f"the profiled worker: {outcome.status}: {first[0] if first else ''}"
    assert isinstance(outcome.result, ProfileResult)
    result = outcome.result.kernels.get(kernel)
    if result is None:
        return f"the profiled worker did not run {kernel}"
    return f"{kernel}: {result.unavailable}" if result.unavailable else ""


def _summarize(tool: str, executable: Path, report: Path, summary: Path) -> str:
    """Write the report's CSV summary; empty, or why there is none."""
    command = profiler_tools.summary_command(tool, executable, report)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SUMMARY_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as error:
        return f"summary: {type(error).__name__}: {error}"
    summary.write_text(done.stdout)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return f"summary: {' '.join(command[:2])} failed: {last}"
    return ""
