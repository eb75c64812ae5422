"""``gemmreg list`` and ``gemmreg check`` (with its sanitizer pass)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, Literal

from gemmreg.contract.task_kinds import REFUSAL
from gemmreg.deciding.options import UsageError
from gemmreg.interface import cli_device
from gemmreg.interface.cli_common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    _check_names,
    _devices,
    _dtypes,
    _error,
    _layouts,
    _progress,
    _timeout,
)


def _strict_failures(kernels: Sequence[Any], issues: Sequence[Any]) -> list[str]:
    """What ``--strict`` fails on: plugins that cannot run here (among
    ``kernels``: those named, when any are), and every plugin that failed to
    load, named or not: no name can select or rule out kernels nobody could
    read (a blocked plugin was the user's choice)."""
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
    from gemmreg.discovery import registry
    from gemmreg.rendering import render_list

    found = registry.discover()
    print(render_list.list_table(found, args.format))
    if args.strict:
        return _fail_strict(_strict_failures(found.select([]), found.issues))
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    import attrs
    from gemmreg.contract import backend
    from gemmreg.deciding import matrix
    from gemmreg.discovery import registry
    from gemmreg.orchestrating import check_saving
    from gemmreg.orchestrating.progress import Meter
    from gemmreg.rendering import render
    from gemmreg.running import (
        check_runner,
        check_shards,
        devices,
        environment,
        ray_check,
        ray_cluster,
        sanitizer_pass,
    )
    from gemmreg.storage import run_folder

    tools = _sanitize_tools(args.sanitize)
    timeout = _timeout(args.timeout)
    dtypes, layouts = _dtypes(args.dtype), _layouts(args.layout)
    _check_names("check", args.names, 0)
    found = registry.discover()
    kernels = found.select(args.names)
    gpu = backend.current().is_gpu
    ray_address = ray_cluster.address(args.ray)
    if ray_address is not None and (args.devices is not None or args.device is not None):
        raise UsageError("--ray and --devices: one or the other (Ray gives each task its GPU)")
    if ray_address is not None and tools:
        raise UsageError(ray_cluster.NO_SANITIZER)
    cli_device.require_gpu(args, backend.current())
    chosen = _devices(cli_device.several(args), backend.current())
    if ray_address is not None:
        ray_cluster.require()
    if args.out is not None:  # the last check: --force removes the old run only now
        run_folder.claim(args.out, force=args.force)  # held until the command ends
    level: Literal["quick", "full"] = "full" if args.level == "full" else "quick"
    cases = matrix.build(level, gpu, dtypes, layouts)
    if args.seed is not None:
        cases = [attrs.evolve(case, seed=args.seed) for case in cases]

    results: list[check_runner.CaseResult] = []
    meter = Meter(_works(kernels, cases, gpu), "cases")

    def progress(result: check_runner.CaseResult) -> None:
        results.append(result)  # kept as they finish, so that Ctrl-C loses none
        if result.status == "skip":
            return
        line = f"  {result.id}: {result.status}"
        quiet = result.status == "pass" and not args.verbose  # failures always get a line
        if meter.done_counting:  # the sanitizer pass, after the matrix
            if not quiet:
                meter.line(line)
        elif quiet:
            meter.tick(float(result.case.problem.flops))
        else:
            meter.advance(float(result.case.problem.flops), line)

    on_devices = {} if chosen is None else {"devices": devices.described(chosen)}
    manifest = environment.manifest(kernels, level=level, **on_devices) if args.out else {}
    interrupted = False
    try:
        if ray_address is not None:

            def saved(so_far: list[Any], nodes: list[dict[str, Any]]) -> None:
                if args.out is not None:  # as each batch arrives: a lost driver keeps them
                    check_saving.save_check(
                        args.out, {**manifest, "ray_nodes": nodes}, so_far, True
                    )

            results[:], nodes = ray_check.check_on_ray(
                kernels, cases, gpu, ray_address, progress, timeout, on_batch=saved
            )
            manifest["ray_nodes"] = nodes
        elif chosen is None:
            check_runner.run_check(kernels, cases, gpu, on_result=progress, task_timeout=timeout)
        else:  # merged in the order of the kernels, as on one device
            results[:] = check_shards.check_on_devices(
                kernels, cases, gpu, chosen, on_result=progress, task_timeout=timeout
            )
        meter.done_counting = True
        if tools:
            sanitize_cases = matrix.sanitize_cases(dtypes, layouts)
            if args.seed is not None:
                sanitize_cases = [attrs.evolve(case, seed=args.seed) for case in sanitize_cases]
            sanitizer_pass.run_pass_here(
                kernels, sanitize_cases, tools, args.out, manifest, meter.line, progress, chosen
            )
    except KeyboardInterrupt:
        interrupted = True
    finally:
        meter.close()
    print(render.check_output(results, args.format, interrupted, every_case=args.verbose))
    if tools and args.format in ("table", "markdown"):  # csv and json: one document
        print("\n" + render.sanitize_summary(results, args.format))
    if args.out is not None:
        check_saving.save_check(args.out, manifest, results, interrupted, bool(tools))
        _progress(f"evidence written to {args.out}/")
    for issue in found.issues:
        if issue.stage != "blocked":
            _progress(
                f"warning: plugin {issue.origin.plugin!r} not loaded: {issue.stage}: {issue.reason}"
            )
    if interrupted:
        _progress(f"gemmreg: interrupted: {len(results)} finished cases kept, marked partial")
        return EXIT_INTERRUPTED
    code = check_runner.exit_code(results)
    if not any(r.status != "skip" and r.kind != REFUSAL for r in results):
        _error(f"nothing ran: {_why_nothing_ran(kernels, results)}")
        code = EXIT_FAILURE
    if args.strict:  # BROKEN counts even when plugins are named: its kernels are unknown
        code = max(code, _fail_strict(_strict_failures(kernels, found.issues)))
    return code


def _works(kernels: Sequence[Any], cases: Sequence[Any], gpu: bool) -> list[float]:
    """The work (2MNK) of every case that will run, for the progress meter's ETA."""
    from gemmreg.running import check_runner

    return [
        float(case.problem.flops)
        for kernel in kernels
        for _, case in check_runner.plan(kernel, cases, gpu)[1]
    ]


def _why_nothing_ran(kernels: Sequence[Any], results: Sequence[Any]) -> str:
    if not kernels:
        return "no plugin loaded (see gemmreg list)"
    reasons = dict.fromkeys(f"{r.kernel}: {r.reason}" for r in results if r.kind != REFUSAL)
    shown = "; ".join(list(reasons)[:3]) + ("; ..." if len(reasons) > 3 else "")
    return f"every case was skipped ({shown})"


def _sanitize_tools(value: str | None) -> tuple[str, ...]:
    from gemmreg.deciding import sanitizer_tools

    if value is None:
        return ()
    try:
        return sanitizer_tools.parse_tools(value)
    except sanitizer_tools.UnknownToolError as error:
        raise UsageError(str(error)) from None
