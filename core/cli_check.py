"""``gemmreg list`` and ``gemmreg check`` (with its sanitizer pass)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gemmreg import options as opt
from gemmreg.cli_common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    _check_names,
    _dtypes,
    _error,
    _layouts,
    _progress,
    _timeout,
)
from gemmreg.options import UsageError
from gemmreg.task_kinds import REFUSAL


def _strict_failures(kernels: Sequence[Any], issues: Sequence[Any]) -> list[str]:
    """What ``--strict`` fails on: plugins that cannot run here, and plugins
    that failed to load (a blocked plugin was the user's choice)."""
    unavailable = [
        f"plugin {k.name!r} is unavailable: {k.unavailable}" for k in kernels if k.unavailable
    ]
    broken = [
        f"plugin {i.origin.plugin!r} is BROKEN: {i.stage}: {i.reason}"
        for i in issues
        if i.stage != "blocked"
    ]
    return unavailable + broken


def _fail_strict(failures: Sequence[str]) -> int:
    for failure in failures:
        _error(f"strict: {failure}")
    return EXIT_FAILURE if failures else EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    """Exit 0 even with BROKEN rows (listing them is the point), unless --strict."""
    from gemmreg import registry, render

    found = registry.discover()
    print(render.list_table(found, args.format))
    if args.strict:
        return _fail_strict(_strict_failures(found.select([]), found.issues))
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    import attrs
    from gemmreg import backend, checking, environment, matrix, registry, render

    tools = _sanitize_tools(args.sanitize)
    timeout = _timeout(args.timeout)
    dtypes, layouts = _dtypes(args.dtype), _layouts(args.layout)
    _check_names("check", args.names, 0)
    found = registry.discover()
    kernels = found.select(args.names)
    if args.out is not None:
        opt.writable_directory(args.out, "--out")
    gpu = backend.current().is_gpu
    level = args.level or "quick"
    cases = matrix.build(level, gpu, dtypes, layouts)
    if args.seed is not None:
        cases = [attrs.evolve(case, seed=args.seed) for case in cases]

    results: list[checking.CaseResult] = []

    def progress(result: checking.CaseResult) -> None:
        results.append(result)  # kept as they finish, so that Ctrl-C loses none
        if result.status != "skip":
            _progress(f"  {result.id}: {result.status}")

    manifest = environment.manifest(kernels, level=level) if args.out is not None else {}
    interrupted = False
    try:
        checking.run_check(kernels, cases, gpu, on_result=progress, task_timeout=timeout)
        if tools:
            sanitize_cases = matrix.sanitize_cases(dtypes, layouts)
            if args.seed is not None:
                sanitize_cases = [attrs.evolve(case, seed=args.seed) for case in sanitize_cases]
            _sanitize(kernels, sanitize_cases, tools, args.out, manifest, progress)
    except KeyboardInterrupt:
        interrupted = True
    print(_check_output(results, args.format, interrupted))
    summary = {}
    if tools and args.format != "json":
        print("\n" + render.sanitize_summary(results, args.format))
    if tools:
        summary = {"sanitize-summary.txt": render.sanitize_summary(results, "table")}
    if args.out is not None:
        _write_evidence(
            args.out,
            {
                **summary,
                "check.txt": _check_output(results, "table", interrupted),
                "check.md": _check_output(results, "markdown", interrupted),
                "check.json": _check_output(results, "json", interrupted),
                "manifest.json": render.dumps(manifest),
            },
        )
    for issue in found.issues:
        if issue.stage != "blocked":
            _progress(
                f"warning: plugin {issue.origin.plugin!r} not loaded: {issue.stage}: {issue.reason}"
            )
    if interrupted:
        _progress(f"gemmreg: interrupted: {len(results)} finished cases kept, marked partial")
        return EXIT_INTERRUPTED
    code = checking.exit_code(results)
    if not any(r.status != "skip" and r.kind != REFUSAL for r in results):
        _error(f"nothing ran: {_why_nothing_ran(kernels, results)}")
        code = EXIT_FAILURE
    if args.strict:
        issues = found.issues if not args.names else []
        code = max(code, _fail_strict(_strict_failures(kernels, issues)))
    return code


PARTIAL_CHECK_BANNER = "[PARTIAL: check interrupted; only the cases below finished]"


def _check_output(results: Sequence[Any], fmt: str, interrupted: bool) -> str:
    """The check table, marked partial after Ctrl-C (a ``partial`` key in JSON)."""
    from gemmreg import render

    text = render.check_table(results, fmt)
    if fmt == "json":
        return render.dumps({"partial": interrupted, **json.loads(text)})
    return f"{PARTIAL_CHECK_BANNER}\n\n{text}" if interrupted else text


def _why_nothing_ran(kernels: Sequence[Any], results: Sequence[Any]) -> str:
    if not kernels:
        return "no plugin loaded (see gemmreg list)"
    reasons = dict.fromkeys(f"{r.kernel}: {r.reason}" for r in results if r.kind != REFUSAL)
    shown = "; ".join(list(reasons)[:3]) + ("; ..." if len(reasons) > 3 else "")
    return f"every case was skipped ({shown})"


def _sanitize_tools(value: str | None) -> tuple[str, ...]:
    from gemmreg import sanitizer

    if value is None:
        return ()
    try:
        return sanitizer.parse_tools(value)
    except sanitizer.UnknownToolError as error:
        raise UsageError(str(error)) from None


def _sanitize(
    kernels: Sequence[Any],
    cases: Sequence[Any],
    tools: Sequence[str],
    out: Path | None,
    manifest: dict[str, Any],
    progress: Any,
) -> list[Any]:
    """The sanitizer pass: skipped, with the reason, where a tool cannot run."""
    import tempfile

    from gemmreg import backend, sanitizer, sanitizing

    kind = backend.current().kind
    reasons = {tool: sanitizer.unavailable_reason(tool, kind) for tool in tools}
    for reason in dict.fromkeys(r for r in reasons.values() if r):
        skipped = [t for t, r in reasons.items() if r == reason]
        which = "" if len(skipped) == len(tools) else f" ({', '.join(skipped)})"
        _progress(f"sanitizer pass skipped{which}: {reason}")
    runnable = [t for t, r in reasons.items() if not r]
    log_dir = Path(".")
    if runnable:
        if out is not None:
            log_dir = out / "sanitizer"
        else:
            log_dir = Path(tempfile.mkdtemp(prefix="gemmreg-sanitize-"))
        executable = sanitizer.locate()
        _progress(f"sanitizer pass: {', '.join(runnable)}; raw logs in {log_dir}/")
        if out is not None:
            manifest["sanitizer"] = {
                "tools": list(tools),
                "executable": str(executable) if executable else None,
                "version": sanitizer.version(executable) if executable else None,
                "environment": sanitizer.NO_CACHING_ENV,
                "command": sanitizer.command(
                    executable or sanitizer.EXECUTABLE, "TOOL", Path("LOG")
                ),
            }
    return sanitizing.run_pass(kernels, cases, tools, kind, log_dir, on_result=progress)


def _write_evidence(directory: Path, files: dict[str, str]) -> None:
    from gemmreg import render

    for name, text in files.items():
        render.write_atomically(directory / name, text + "\n")
    _progress(f"evidence written to {directory}/")
