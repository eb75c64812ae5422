"""What every ``gemmreg`` command shares: exit codes, stderr lines, the
choices of dtype and layout, and the check of plugin names."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gemmreg.deciding import options as opt
from gemmreg.deciding.options import UsageError

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_NOT_SAVED = 4
"""The storage refused a save mid-run (a full disk, a folder made unwritable
or read-only): one line names the file and what was kept; the figures were
printed as each point finished."""

if TYPE_CHECKING:
    from gemmreg.contract.records import DType, Layout


def _dtypes(value: str | None, option: str = "--dtype") -> list[DType]:
    from gemmreg.contract.records import DTYPES

    return opt.choices(value, DTYPES, "dtype", option)


def _layouts(value: str | None) -> list[Layout]:
    from gemmreg.contract.records import LAYOUTS

    return opt.choices(value, LAYOUTS, "layout", "--layout")


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _error(text: str) -> None:
    """One line on stderr for a failure that is not bad input (exit 1)."""
    print(f"gemmreg: {' '.join(text.splitlines())}", file=sys.stderr, flush=True)


def _check_names(command: str, names: Sequence[str], minimum: int) -> None:
    if len(names) < minimum:
        need = "two plugins" if minimum == 2 else "one plugin"
        raise UsageError(f"{command} needs at least {need}")
    if len(set(names)) != len(names):
        raise UsageError(f"{command} names a plugin twice")


def _timeout(value: float | None) -> float | None:
    import math

    if value is not None and not (math.isfinite(value) and value > 0):
        raise UsageError(f"--timeout must be a positive number of seconds, got {value}")
    return value


def _devices(value: str | None, info: Any) -> list[Any] | None:
    """The GPUs ``--devices`` spreads the work over (:mod:`gemmreg.running.devices`),
    checked against this host's; None without the option, or where one index
    pinned the whole run (:func:`gemmreg.interface.cli_device.several`)."""
    if value is None:
        return None
    from gemmreg.deciding.device_choice import parse_devices
    from gemmreg.running import devices

    choice = parse_devices(value)
    return devices.resolve(choice, devices.available_devices(info.is_gpu, info.device_name))
