"""``--devices all|0,1,...`` (and its shorthand ``--device N``): which GPUs of
this host a command runs on.

``all`` or comma-separated indices in torch's numbering (``0,1``), counted
among the devices this process may see: where ``CUDA_VISIBLE_DEVICES`` (or
ROCm's ``HIP_VISIBLE_DEVICES``) is already set (``2,3``), index 1 is its
second entry (``3``). ``--device N`` is ``--devices N``, parsed here the same
way; giving both is refused.

One GPU named is the whole run narrowed to it, decided in the parent before
torch is imported: the environment every process inherits is pinned
(:func:`gemmreg.workers.devices.pin_device_env`), each process then calls it
device 0, and the manifest records the variables with the other switches
(:data:`gemmreg.instruments.environment.SWITCH_NAMES`); NVML, which ignores the
variables, finds the device by its UUID (:mod:`gemmreg.instruments.gpu_monitor`).
Several GPUs (or ``all``) spread the work, one worker pinned per GPU, checked
against the devices that exist by :func:`gemmreg.workers.devices.resolve`,
once torch can say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from gemmreg.contract.options import UsageError

ALL: Literal["all"] = "all"
DeviceChoice = Literal["all"] | tuple[int, ...]
"""``all``, or the indices named, in the order named."""
MAX_DEVICE_INDEX = 1023
"""Far above any host's device count; a bound so that a typo is refused."""
VISIBLE_ENVS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")
"""The variables that restrict which GPUs a process sees (NVIDIA's, AMD's)."""


def parse_devices(value: str) -> DeviceChoice:
    """``all`` or ``0,1,...``: one clear line for anything else."""
    text = value.strip()
    if text.lower() == ALL:
        return ALL
    parts = [part.strip() for part in text.split(",")]
    if not text or not all(part.isascii() and part.isdigit() for part in parts):
        raise UsageError(f"--devices takes 'all' or GPU indices such as 0,1; got {value!r}")
    indices = tuple(int(part) for part in parts)
    if len(set(indices)) != len(indices):
        raise UsageError(f"--devices names a device twice: {value!r}")
    if max(indices) > MAX_DEVICE_INDEX:
        raise UsageError(f"--devices: device indices go up to {MAX_DEVICE_INDEX}; got {value!r}")
    return indices


def chosen(device: int | None, devices: str | None) -> tuple[str, DeviceChoice] | None:
    """The option given (``--device`` or ``--devices``, for messages) and its
    choice; None without either. ``--device N`` is parsed as ``--devices N``."""
    if device is not None and devices is not None:
        raise UsageError("--device and --devices: one or the other (--device N is --devices N)")
    if device is not None:
        return "--device", parse_devices(str(device))
    if devices is not None:
        return "--devices", parse_devices(devices)
    return None


def single(choice: DeviceChoice) -> int | None:
    """The one GPU a choice names (the run narrowed to it), or None for several."""
    return choice[0] if choice != ALL and len(choice) == 1 else None


def visible_entries(environ: Mapping[str, str]) -> tuple[str, list[str]] | None:
    """The variable restricting the visible devices and its entries, or None
    where none is set (every device of the host is visible)."""
    for name in VISIBLE_ENVS:
        current = environ.get(name, "").strip()
        if current:
            return name, [entry.strip() for entry in current.split(",") if entry.strip()]
    return None


def check_visible(option: str, index: int, environ: Mapping[str, str]) -> None:
    """UsageError where ``index`` is past the devices the environment leaves visible."""
    restricted = visible_entries(environ)
    if restricted is None:
        return
    name, entries = restricted
    if index >= len(entries):
        raise UsageError(
            f"{option} {index}: {name}={environ[name].strip()!r} leaves {len(entries)} "
            f"device(s) visible, numbered 0 to {len(entries) - 1}"
        )


def not_found(option: str, index: int, pinned: Mapping[str, str]) -> str:
    """The line for a one-GPU choice that left torch no GPU."""
    setting = ", ".join(f"{k}={v}" for k, v in pinned.items() if k in VISIBLE_ENVS)
    return f"{option} {index}: no GPU {index} here (with {setting} torch sees no GPU)"
