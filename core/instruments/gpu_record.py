"""The manifest's GPU entry, read through NVML: which GPU, how it was set, who else was on it.

A verdict is only as good as the conditions it was taken in. The record names
the physical GPU (UUID, serial), whether its clocks were set away from their
defaults (applications clocks, a locked range), its power limits and
persistence, and every other process using it, so a verdict taken on a busy,
shared GPU can be flagged (``gpu_trace.busy_reason``). Every field NVML refuses
is recorded as "unavailable: <reason>": one missing field never costs the rest.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping
from types import ModuleType
from typing import SupportsInt, TypedDict, TypeVar

from gemmreg.instruments.gpu_trace import decode_reasons

COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}
"""NVML_COMPUTEMODE_* values; ``prohibited`` would stop our own kernels."""

PROCESS_LISTS = {
    "compute": "nvmlDeviceGetComputeRunningProcesses",
    "graphics": "nvmlDeviceGetGraphicsRunningProcesses",
    "mps_compute": "nvmlDeviceGetMPSComputeRunningProcesses",
}
"""The NVML calls that list a GPU's processes, each kind under its own name."""

LOCK_CHECK = (
    "applications clocks against their defaults; nvclockmin/nvclockmax of "
    "nvmlDeviceGetCurrentClockFreqs against the max SM clock (not yet seen on a GPU "
    "whose clocks were locked); NVML has no getter for nvmlDeviceSetGpuLockedClocks"
)
"""How ``clocks_locked.looks_locked`` was decided, kept beside it in the record."""


T = TypeVar("T")


class OtherProcess(TypedDict):
    """One process on the GPU that is not gemmreg's, merged over NVML's lists."""

    pid: int
    name: object
    """Its name as NVML gives it, or "unavailable: <reason>"."""
    kinds: list[str]
    """The :data:`PROCESS_LISTS` it was found in."""
    used_memory_bytes: int | str


def describe_error(error: BaseException) -> str:
    """One line for an NVML (or binding) error: its class and message."""
    return f"{type(error).__name__}: {error}".rstrip(": ")


def text(value: object) -> object:
    """Old pynvml returns bytes for strings; the record wants str."""
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def reasons_call(nvml: ModuleType, which: str) -> Callable[[object], int]:
    """NVML's ``nvmlDeviceGet{which}ClocksEventReasons``, or the older "Throttle" name
    (renamed in NVML 12.535); a call that raises AttributeError when neither exists.

    ``nvml`` here and below is pynvml (tests hand in a stand-in with its
    functions and constants); a device handle is NVML's, opaque to gemmreg."""
    for name in (
        f"nvmlDeviceGet{which}ClocksEventReasons",
        f"nvmlDeviceGet{which}ClocksThrottleReasons",
    ):
        call = getattr(nvml, name, None)
        if call is not None:
            return call

    def missing(handle: object) -> int:
        raise AttributeError(f"pynvml has no nvmlDeviceGet{which}Clocks{{Event,Throttle}}Reasons")

    return missing


def ask(call: Callable[[], T], convert: Callable[[T], object] = text) -> object:
    """``convert(call())``, or "unavailable: <reason>" when NVML refuses."""
    try:
        return convert(call())
    except Exception as error:  # NVMLError, or a binding without the call or constant
        return f"unavailable: {describe_error(error)}"


def _clocks(nvml: ModuleType, handle: object, domain: str) -> dict[str, object]:
    kind = f"NVML_CLOCK_{domain.upper()}"
    return {
        "now": ask(lambda: nvml.nvmlDeviceGetClockInfo(handle, getattr(nvml, kind))),
        "max": ask(lambda: nvml.nvmlDeviceGetMaxClockInfo(handle, getattr(nvml, kind))),
        "applications": ask(
            lambda: nvml.nvmlDeviceGetApplicationsClock(handle, getattr(nvml, kind))
        ),
        "default_applications": ask(
            lambda: nvml.nvmlDeviceGetDefaultApplicationsClock(handle, getattr(nvml, kind))
        ),
    }


def _freq_range(freqs: object) -> tuple[int, int] | None:
    """(nvclockmin, nvclockmax) from NVML's "nvclock=345, nvclockmin=345, ..." text."""
    if not isinstance(freqs, str):
        return None
    low = re.search(r"nvclockmin=(\d+)", freqs)
    high = re.search(r"nvclockmax=(\d+)", freqs)
    return (int(low.group(1)), int(high.group(1))) if low and high else None


def clock_setting(clocks: Mapping[str, Mapping[str, object]], freqs: object) -> dict[str, object]:
    """Whether the clocks look set away from the GPU's own management.

    A locked or lowered clock makes a run faster or slower than the same GPU as
    shipped, and a comparison taken under it may not hold elsewhere; it is
    recorded, not refused. "unknown" when nothing that would show it is readable.
    """
    changed = [
        domain
        for domain, c in clocks.items()
        if isinstance(c["applications"], int)
        and isinstance(c["default_applications"], int)
        and c["applications"] != c["default_applications"]
    ]
    span = _freq_range(freqs)
    top = clocks.get("sm", {}).get("max")
    narrowed = span is not None and (span[0] == span[1] or (isinstance(top, int) and span[1] < top))
    readable = span is not None or any(
        isinstance(c["applications"], int) and isinstance(c["default_applications"], int)
        for c in clocks.values()
    )
    looks: bool | str = bool(changed or narrowed) if readable else "unknown"
    return {
        "looks_locked": looks,
        "applications_clocks_changed": changed,
        "sm_range_mhz": list(span) if span else "unavailable: no nvclockmin/nvclockmax",
        "how": LOCK_CHECK,
    }


def _memory(used: object) -> int | str:
    return used if isinstance(used, int) else "unavailable: not reported"


def _process_name(nvml: ModuleType, pid: int) -> object:
    return nvml.nvmlSystemGetProcessName(pid)


def processes(nvml: ModuleType, handle: object, own_pids: Collection[int]) -> dict[str, object]:
    """Other processes on the GPU, own pids excluded, merged over NVML's lists."""
    own = {int(p) for p in own_pids}
    found: dict[int, OtherProcess] = {}
    refused: dict[str, str] = {}
    seen_own: set[int] = set()
    for kind, call in PROCESS_LISTS.items():
        try:
            listed = getattr(nvml, call)(handle)
        except Exception as error:
            refused[kind] = f"unavailable: {describe_error(error)}"
            continue
        for proc in listed:
            pid = int(proc.pid)
            if pid in own:
                seen_own.add(pid)
                continue
            entry = found.get(pid)
            if entry is None:
                name = ask(functools.partial(_process_name, nvml, pid))
                entry = found[pid] = {
                    "pid": pid,
                    "name": name,
                    "kinds": [],
                    "used_memory_bytes": _memory(proc.usedGpuMemory),
                }
            elif isinstance(proc.usedGpuMemory, int):
                before = entry["used_memory_bytes"]
                entry["used_memory_bytes"] = max(
                    proc.usedGpuMemory, before if isinstance(before, int) else 0
                )
            entry["kinds"].append(kind)
    others: list[OtherProcess] | str = [found[pid] for pid in sorted(found)]
    if len(refused) == len(PROCESS_LISTS):
        others = "; ".join(f"{kind}: {why}" for kind, why in refused.items())
        others = f"unavailable: {others.replace('unavailable: ', '')}"
    return {
        "other_processes": others,
        "own_pids": sorted(own),
        "own_pids_seen_on_gpu": sorted(seen_own),
        "process_lists_refused": refused,
    }


def _enabled(value: SupportsInt) -> str:
    return "enabled" if int(value) == 1 else "disabled"


def _watts(milliwatts: SupportsInt) -> float:
    return int(milliwatts) / 1000.0


def build_device_record(
    nvml: ModuleType, handle: object, own_pids: Collection[int]
) -> dict[str, object]:
    """Everything the manifest says about the GPU; see the module docstring."""
    clocks = {domain: _clocks(nvml, handle, domain) for domain in ("sm", "mem", "graphics")}
    freqs = ask(lambda: nvml.nvmlDeviceGetCurrentClockFreqs(handle))
    record: dict[str, object] = {
        "uuid": ask(lambda: nvml.nvmlDeviceGetUUID(handle)),
        "name": ask(lambda: nvml.nvmlDeviceGetName(handle)),
        "serial": ask(lambda: nvml.nvmlDeviceGetSerial(handle)),
        "pci_bus_id": ask(lambda: nvml.nvmlDeviceGetPciInfo(handle).busId),
        "driver_version": ask(nvml.nvmlSystemGetDriverVersion),
        "nvml_version": ask(lambda: nvml.nvmlSystemGetNVMLVersion()),
        "persistence_mode": ask(lambda: nvml.nvmlDeviceGetPersistenceMode(handle), _enabled),
        "compute_mode": ask(
            lambda: nvml.nvmlDeviceGetComputeMode(handle),
            lambda mode: COMPUTE_MODES.get(int(mode), f"unknown ({mode})"),
        ),
        "mig_mode": ask(lambda: nvml.nvmlDeviceGetMigMode(handle)[0], _enabled),
        "performance_state": ask(
            lambda: nvml.nvmlDeviceGetPerformanceState(handle), lambda p: f"P{int(p)}"
        ),
        "clocks_mhz": clocks,
        "clock_freqs_now": freqs,
        "clocks_locked": clock_setting(clocks, freqs),
        "power_limit_w": ask(lambda: nvml.nvmlDeviceGetPowerManagementLimit(handle), _watts),
        "enforced_power_limit_w": ask(lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle), _watts),
        "default_power_limit_w": ask(
            lambda: nvml.nvmlDeviceGetPowerManagementDefaultLimit(handle), _watts
        ),
        "temperature_c": ask(
            lambda: nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU), int
        ),
        "slowdown_temperature_c": ask(
            lambda: nvml.nvmlDeviceGetTemperatureThreshold(
                handle, nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
            ),
            int,
        ),
        "active_reasons": ask(
            lambda: reasons_call(nvml, "Current")(handle),
            lambda mask: list(decode_reasons(int(mask))),
        ),
        "supported_reasons": ask(
            lambda: reasons_call(nvml, "Supported")(handle),
            lambda mask: list(decode_reasons(int(mask))),
        ),
    }
    record.update(processes(nvml, handle, own_pids))
    return record
