"""The ``gemmreg`` command line: parsing with :mod:`gemmreg.commands.cli_parser`'s
grammar, and dispatch (the commands are in :mod:`gemmreg.commands.cli_check`,
:mod:`gemmreg.commands.cli_timing` and :mod:`gemmreg.commands.cli_report`).

Exit codes: 0 success; 1 a check or comparison found a failure (or an INVALID
verdict), ``check`` ran nothing at all, or ``--strict`` found an unavailable or
broken plugin; 2 bad input (unknown plugin, malformed shape, option out of
bounds, unusable path, malformed saved run, fewer than two runnable plugins for
``compare``, an ``--out`` another run holds or that holds a run), checked
before any work starts; 3 gemmreg itself went wrong; 4 the storage refused a
save mid-run (full disk, unwritable folder: the figures were printed);
130 interrupted (what finished is kept); 143 and 129 ended by SIGTERM and
SIGHUP (workers killed first, what finished kept). Bad input gets one line, never a traceback
(``GEMMREG_DEBUG=1`` shows tracebacks of gemmreg's own errors).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

from gemmreg.commands import (
    cli_device,
    cli_plot_options,
    closed_streams,
    document_output,
)
from gemmreg.commands.cli_check import cmd_check, cmd_list
from gemmreg.commands.cli_common import (
    EXIT_FAILURE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NOT_SAVED,
    EXIT_OK,
    EXIT_USAGE,
)
from gemmreg.commands.cli_parser import build_parser
from gemmreg.commands.cli_report import cmd_report
from gemmreg.commands.cli_timing import cmd_bench, cmd_compare
from gemmreg.contract.options import UsageError, parse_shape, parse_shapes
from gemmreg.reporting import run_folder
from gemmreg.reporting.not_saved import RunNotSaved
from gemmreg.workers import quick_exit

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_NOT_SAVED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "build_parser",
    "main",
    "parse_shape",
    "parse_shapes",
]


COMMANDS = {
    "list": cmd_list,
    "check": cmd_check,
    "compare": cmd_compare,
    "bench": cmd_bench,
    "report": cmd_report,
}


def run() -> None:
    """The ``gemmreg`` command: :func:`main`, then a quick exit
    (:mod:`gemmreg.workers.quick_exit`) once every result is written. stdout
    stays kept apart until the process ends: a plugin's thread may still be
    writing while the exit handlers run."""
    with document_output.kept_apart():
        quick_exit.leave(main())


def main(argv: Sequence[str] | None = None) -> int:
    """The command's exit code; a reader of stdout or stderr that went away
    drops what is written after, and changes neither the work nor the code
    (:mod:`gemmreg.commands.closed_streams`)."""
    with closed_streams.kept_going():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    from gemmreg.discovery import interrupts

    interrupts.install_termination_handlers()
    try:
        with document_output.on_stdout():  # --help
            args = build_parser().parse_args(argv)
        cli_device.choose(args)  # before torch is imported, here or in a worker
        cli_plot_options.apply(args)
        if args.command in ("check", "compare", "bench"):
            from gemmreg.workers import temp_folders

            temp_folders.sweep_orphans()  # what killed runs left in the temporary directory
        with document_output.kept_apart():  # stdout: gemmreg's tables alone, whoever else writes
            code = COMMANDS[args.command](args)
        terminated = interrupts.termination_signal()  # a command that kept partial results
        if terminated:
            print(f"gemmreg: {interrupts.Terminated(terminated)}; workers killed", file=sys.stderr)
            return 128 + terminated
        return code
    except UsageError as error:  # an unknown plugin's name among them
        message = str(error.args[0] if error.args else error)
        print(f"gemmreg: error: {' '.join(message.splitlines())}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as error:
        if isinstance(error, interrupts.Terminated):
            print(f"gemmreg: {error}; workers killed", file=sys.stderr)
            return 128 + error.signum
        print("gemmreg: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except RunNotSaved as error:  # a save past the sweep's own (compare --out, profilers)
        print(f"gemmreg: {error}; the run on disk is its last save", file=sys.stderr)
        return EXIT_NOT_SAVED
    except Exception as error:
        if os.environ.get("GEMMREG_DEBUG"):
            traceback.print_exc()
        print(
            f"gemmreg: internal error: {type(error).__name__}: {error} "
            "(set GEMMREG_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        run_folder.release_all()  # the run folders this command held
