"""``gemmreg list`` and ``gemmreg check`` (with its sanitizer pass). ``check``
parses its options once into a request and hands it to the work the Python
API calls too (:mod:`gemmreg.commands.check_command`)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from gemmreg.commands import cli_device, document_output
from gemmreg.commands.cli_common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    _batch_layouts,
    _dtypes,
    _error,
    _layouts,
    _out_dtypes,
    _progress,
    _scalings,
)
from gemmreg.commands.request_values import option_spelling
from gemmreg.commands.requests import CheckRequest
from gemmreg.contract.options import UsageError


def _strict_failures(unavailable: Mapping[str, str], issues: Sequence[Any]) -> list[str]:
    """What ``--strict`` fails on: plugins that cannot run here (among
    ``unavailable``: those named, when any are), and every plugin that failed to
    load, named or not: no name can select or rule out kernels nobody could
    read (a blocked plugin was the user's choice)."""
    cannot = [f"plugin {name!r} is unavailable: {why}" for name, why in unavailable.items()]
    broken = [
        f"plugin {i.origin.plugin!r} is BROKEN: {i.stage}: {i.reason}"
        for i in issues
        if i.stage != "blocked"
    ]
    return cannot + broken


def _fail_strict(failures: Sequence[str]) -> int:
    for failure in failures:
        _error(f"strict: {failure}")
    return EXIT_FAILURE if failures else EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    """Exit 0 even with BROKEN rows (listing them is the point), unless --strict."""
    from gemmreg.discovery import registry
    from gemmreg.reporting import render_list

    found = registry.discover()
    document_output.emit(render_list.list_table(found, args.format))
    if args.strict:
        unavailable = {k.name: k.unavailable for k in found.select([]) if k.unavailable}
        return _fail_strict(_strict_failures(unavailable, found.issues))
    return EXIT_OK


def check_request(args: argparse.Namespace) -> CheckRequest:
    """``check``'s options, parsed once (the Python API builds the same record)."""
    return CheckRequest(
        plugins=tuple(args.names),
        level="full" if args.level == "full" else "quick",
        dtypes=tuple(_dtypes(args.dtype)),
        layouts=tuple(_layouts(args.layout)),
        out_dtypes=tuple(_out_dtypes(args.out_dtype)),
        scalings=tuple(_scalings(args.scaling)),
        batches=args.batch or (1,),
        batch_layouts=tuple(_batch_layouts(args.batch_layout)),
        grouped=args.grouped,
        seed=args.seed,
        timeout=args.timeout,
        out=args.out,
        force=args.force,
        sanitize=_sanitize_tools(args.sanitize),
    )


def cmd_check(args: argparse.Namespace) -> int:
    from gemmreg.checking import check_runner
    from gemmreg.commands import check_command
    from gemmreg.commands.launching import Launch
    from gemmreg.fanout import ray_cluster
    from gemmreg.reporting import formats, render

    request = check_request(args)
    ray_address = ray_cluster.address(args.ray)
    if ray_address is not None and (args.devices is not None or args.device is not None):
        raise UsageError("--ray and --devices: one or the other (Ray gives each task its GPU)")
    if ray_address is not None and request.sanitize:
        raise UsageError(ray_cluster.NO_SANITIZER)
    launch = Launch(
        spell=option_spelling,
        devices=cli_device.several(args),
        ray=ray_address,
        meter=True,
        on_backend=lambda info: cli_device.require_gpu(args, info),
        verbose=args.verbose,
    )
    result = check_command.check(request, _progress, launch)
    document_output.emit(result.table(args.format, every_case=args.verbose))
    if request.sanitize and not formats.get(args.format).document_only:  # one document
        document_output.emit("\n" + render.sanitize_summary(result.cases, args.format))
    check_command.save(result, _progress)
    for issue in result.issues:
        if issue.stage != "blocked":
            _progress(
                f"warning: plugin {issue.origin.plugin!r} not loaded: {issue.stage}: {issue.reason}"
            )
    if result.partial:
        _progress(f"gemmreg: interrupted: {len(result.cases)} finished cases kept, marked partial")
        return EXIT_INTERRUPTED
    code = check_runner.exit_code(result.cases)
    if result.nothing_ran:
        _error(f"nothing ran: {result.nothing_ran}")
        code = EXIT_FAILURE
    if args.strict:  # BROKEN counts even when plugins are named: its kernels are unknown
        code = max(code, _fail_strict(_strict_failures(result.unavailable, result.issues)))
    return code


def _sanitize_tools(value: str | None) -> tuple[str, ...]:
    from gemmreg.checking import sanitizer_tools

    if value is None:
        return ()
    try:
        return sanitizer_tools.parse_tools(value)
    except sanitizer_tools.UnknownToolError as error:
        raise UsageError(str(error)) from None
