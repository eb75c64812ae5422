"""``--device N``: which GPU a command runs on, decided in the parent before
torch is imported, for it and for every worker it starts.

The choice is made the way CUDA and ROCm offer it, by the environment every
process inherits: ``CUDA_VISIBLE_DEVICES`` (``HIP_VISIBLE_DEVICES`` on ROCm)
narrowed to the one device, which each process then calls device 0. One
variable set in the parent reaches every worker, those started ahead
included, and the manifest records it with the other switches
(:data:`gemmreg.running.environment.SWITCH_NAMES`); NVML, which ignores the
variable, finds the device by its UUID (:mod:`gemmreg.running.gpu_monitor`).

``N`` counts the devices this process may see: where the variable is already
set (``CUDA_VISIBLE_DEVICES=2,3``), ``--device 1`` is its second entry (``3``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from gemmreg.deciding.options import UsageError

MAX_DEVICE_INDEX = 1023
"""Far above any host's device count; a bound so that a typo is refused."""
CUDA_VARIABLE = "CUDA_VISIBLE_DEVICES"
HIP_VARIABLE = "HIP_VISIBLE_DEVICES"
ROCM_NODE, NVIDIA_NODE = "/dev/kfd", "/dev/nvidiactl"


def rocm_likely() -> bool:
    """An AMD GPU and no NVIDIA one, told by device nodes, without torch."""
    return os.path.exists(ROCM_NODE) and not os.path.exists(NVIDIA_NODE)


def visible_devices(index: int, environ: Mapping[str, str], rocm: bool) -> dict[str, str]:
    """The variable to set (one name -> one entry) so that device ``index``
    of those visible now is the only one; UsageError past the last."""
    name = HIP_VARIABLE if rocm else CUDA_VARIABLE
    current = environ.get(name, "").strip()
    if not current:
        return {name: str(index)}
    entries = [entry.strip() for entry in current.split(",") if entry.strip()]
    if index >= len(entries):
        raise UsageError(
            f"--device {index}: {name}={current!r} leaves {len(entries)} device(s) "
            f"visible, numbered 0 to {len(entries) - 1}"
        )
    return {name: entries[index]}


def not_found(index: int, chosen: Mapping[str, str]) -> str:
    """The line for a ``--device`` that left torch no GPU."""
    setting = ", ".join(f"{k}={v}" for k, v in chosen.items())
    return f"--device {index}: no GPU {index} here (with {setting} torch sees no GPU)"
