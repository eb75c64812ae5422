"""Clock-aware sampling through NVML: SM clock, power, temperature and throttle reasons.

The timing protocol reads the GPU before and after each kernel's slot in a
round, drops a round in which the clock was pulled down by a passing event,
heat-soaks until the SM clock holds its level, and records in the manifest which
GPU it was, whether its clocks were set, and who else was on it. This module
takes the readings and the record; :mod:`gemmreg.instruments.gpu_trace` (re-exported here)
judges them.

NVML is NVIDIA-only and comes from the optional package nvidia-ml-py (import
name ``pynvml``): ``pip install gemmreg[gpu]``. Without it, or on ROCm, or when
NVML cannot start, :func:`open_monitor` says why in one line and the caller
goes on without clock data (and says so). Nothing here raises on an NVML
error: a refused field is None in a reading and "unavailable: <reason>" in
the record. Reads only: this module never changes a clock, limit or mode.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Collection
from types import ModuleType
from typing import Protocol, TypeVar

from gemmreg.instruments.gpu_record import build_device_record, describe_error, reasons_call, text
from gemmreg.instruments.gpu_trace import (
    DROP_VIOLATIONS,
    REASON_BITS,
    RECORDED_REASONS,
    STEADY_TOLERANCE,
    STEADY_WINDOW_S,
    THROTTLE_DROP_REASONS,
    Reading,
    busy_reason,
    clock_steady,
    decode_reasons,
    round_drop_reason,
    trace_summary,
)

__all__ = [
    "DROP_VIOLATIONS",
    "READ_VIOLATIONS",
    "REASON_BITS",
    "RECORDED_REASONS",
    "STEADY_TOLERANCE",
    "STEADY_WINDOW_S",
    "THROTTLE_DROP_REASONS",
    "Monitor",
    "Reading",
    "busy_reason",
    "clock_steady",
    "decode_reasons",
    "open_monitor",
    "round_drop_reason",
    "trace_summary",
]

NOT_INSTALLED = "nvidia-ml-py is not installed (pip install nvidia-ml-py)"
ROCM = "ROCm: NVML is NVIDIA-only"

READ_VIOLATIONS: dict[str, str] = {
    "power": "NVML_PERF_POLICY_POWER",
    "thermal": "NVML_PERF_POLICY_THERMAL",
    "board_limit": "NVML_PERF_POLICY_BOARD_LIMIT",
    "reliability": "NVML_PERF_POLICY_RELIABILITY",
}
"""Violation counters each reading takes: the three that drop a round
(DROP_VIOLATIONS) and ``power``, recorded to show the cap's share. Not all eight
NVML has: each costs a call, and a reading is taken twice per kernel slot."""

PERMANENT_ERRORS = (
    "NVML_ERROR_NOT_SUPPORTED",
    "NVML_ERROR_FUNCTION_NOT_FOUND",
    "NVML_ERROR_NO_PERMISSION",
)
"""NVML errors that will not change within a run: after one, ``read`` stops
asking for that field, so an unsupported counter does not cost a call per reading."""


T = TypeVar("T")


class ViolationStatus(Protocol):
    """NVML's ``nvmlViolationTime_t``: how long the policy held the clocks down."""

    violationTime: int
    """Nanoseconds, counted since the driver loaded."""


def _violation(nvml: ModuleType, handle: object, policy: str) -> ViolationStatus:
    return nvml.nvmlDeviceGetViolationStatus(handle, getattr(nvml, policy))


class Monitor:
    """One NVML device, opened by :func:`open_monitor`; reads never raise."""

    def __init__(self, nvml: ModuleType, handle: object, nvml_index: int, matched_by: str) -> None:
        self.nvml = nvml
        self.handle = handle
        self.nvml_index = nvml_index
        self.matched_by = matched_by
        self.refused: dict[str, str] = {}
        """First refusal per field while sampling, for the device record."""
        self._skip: set[str] = set()
        self._closed = False
        self._reasons_fn = reasons_call(nvml, "Current")

    def _permanent(self, error: BaseException) -> bool:
        if isinstance(error, AttributeError):
            return True
        codes = {getattr(self.nvml, name, None) for name in PERMANENT_ERRORS} - {None}
        return getattr(error, "value", None) in codes

    def _field(self, field: str, call: Callable[[], T]) -> T | None:
        """``call()``, or None after recording why NVML refused it."""
        if field in self._skip:
            return None
        try:
            return call()
        except Exception as error:  # an NVML error, or a binding too old to have the call
            self.refused.setdefault(field, describe_error(error))
            if self._permanent(error):
                self._skip.add(field)
            return None

    def read(self) -> Reading:
        """The GPU now: nine NVML calls (clocks, power, temperature, reasons,
        READ_VIOLATIONS), about 2 ms on the H200 (13 ms worst of 200); a refused
        field is None. Take it between kernel slots, never inside a timed region."""
        nvml, handle = self.nvml, self.handle
        t_s = time.monotonic()
        unreadable: list[str] = []

        def get(field: str, call: Callable[[], T]) -> T | None:
            value = self._field(field, call)
            if value is None:
                unreadable.append(field)
            return value

        sm = get("sm_mhz", lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM))
        mem = get("mem_mhz", lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM))
        milliwatts = get("power_w", lambda: nvml.nvmlDeviceGetPowerUsage(handle))
        temperature = get(
            "temperature_c",
            lambda: nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU),
        )
        mask = get("reasons", lambda: self._reasons_fn(handle))
        violations: dict[str, int] = {}
        for name, policy in READ_VIOLATIONS.items():
            status = get(f"violation:{name}", functools.partial(_violation, nvml, handle, policy))
            if status is not None:
                violations[name] = int(status.violationTime)
        return Reading(
            t_s=t_s,
            sm_mhz=None if sm is None else int(sm),
            mem_mhz=None if mem is None else int(mem),
            power_w=None if milliwatts is None else milliwatts / 1000.0,
            temperature_c=None if temperature is None else int(temperature),
            reasons=() if mask is None else decode_reasons(int(mask)),
            violations_ns=violations,
            unreadable=tuple(unreadable),
        )

    def device_record(self, own_pids: Collection[int] = ()) -> dict[str, object]:
        """The manifest's GPU entry (see :func:`gemmreg.instruments.gpu_record.build_device_record`).
        This process's own pid is always excluded from the other processes."""
        record = build_device_record(self.nvml, self.handle, {os.getpid(), *own_pids})
        record["nvml_index"] = self.nvml_index
        record["matched_by"] = self.matched_by
        record["refused_while_sampling"] = dict(sorted(self.refused.items()))
        return record

    def close(self) -> None:
        """Shut NVML down (once; NVML counts its inits)."""
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):  # best effort; nothing to report to
                self.nvml.nvmlShutdown()


def _torch_device_uuid(index: int) -> str | None:
    """torch's UUID for a CUDA device, or None when torch cannot say."""
    import torch

    if not torch.cuda.is_available() or index >= torch.cuda.device_count():
        return None
    return str(torch.cuda.get_device_properties(index).uuid)


def device_uuid(index: int) -> str | None:
    """torch's device ``index`` as NVML names it (``GPU-<uuid>``), or None
    where torch has no such CUDA device or cannot say."""
    try:
        found = _torch_device_uuid(index)
    except Exception:  # a record, best effort: never the reason a run fails
        return None
    return f"GPU-{_normal_uuid(found)}" if found else None


def _normal_uuid(uuid: object) -> str:
    """NVML names a GPU "GPU-<uuid>", torch plain "<uuid>"."""
    plain = str(text(uuid)).strip().lower()
    return plain[4:] if plain.startswith("gpu-") else plain


def _locate(nvml: ModuleType, torch_index: int, uuid: str | None) -> tuple[int | None, str]:
    """(NVML index, how it was matched) or (None, why not)."""
    uuids = []
    for i in range(int(nvml.nvmlDeviceGetCount())):
        try:
            uuids.append(_normal_uuid(nvml.nvmlDeviceGetUUID(nvml.nvmlDeviceGetHandleByIndex(i))))
        except Exception as error:
            uuids.append(f"unavailable: {describe_error(error)}")
    if uuid is not None:
        wanted = _normal_uuid(uuid)
        if wanted in uuids:
            return uuids.index(wanted), f"uuid GPU-{wanted}"
        seen = ", ".join(f"GPU-{u}" for u in uuids) or "no devices"
        return (
            None,
            f"no NVML device has torch device {torch_index}'s UUID GPU-{wanted} (NVML sees {seen})",
        )
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return torch_index, f"index {torch_index} (torch gave no UUID; CUDA_VISIBLE_DEVICES unset)"
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    if torch_index >= len(entries):
        return None, f"torch device {torch_index} is not in CUDA_VISIBLE_DEVICES={visible!r}"
    entry = entries[torch_index]
    if entry.isdigit():
        return int(entry), (
            f"index {entry} (torch gave no UUID; CUDA_VISIBLE_DEVICES={visible!r}; CUDA's order "
            "matches NVML's only with CUDA_DEVICE_ORDER=PCI_BUS_ID or one GPU)"
        )
    prefix = _normal_uuid(entry)
    matches = [i for i, u in enumerate(uuids) if u.startswith(prefix)]
    if entry.lower().startswith("gpu-") and len(matches) == 1:
        return matches[0], f"uuid prefix {entry} from CUDA_VISIBLE_DEVICES"
    return None, f"cannot match CUDA_VISIBLE_DEVICES entry {entry!r} to one NVML device"


def open_monitor(
    torch_device_index: int = 0,
    nvml: ModuleType | None = None,
    *,
    device_uuid: Callable[[int], str | None] | None = None,
) -> tuple[Monitor | None, str]:
    """A monitor on the NVML device that is torch's CUDA device ``torch_device_index``.

    Returns (monitor, "") or (None, one line saying why not). The device is found
    by UUID, which CUDA_VISIBLE_DEVICES cannot renumber; only when torch gives no
    UUID does it fall back to the index, read through CUDA_VISIBLE_DEVICES. A
    UUID that NVML does not know is refused rather than guessed at: clocks read
    off the wrong GPU would vouch for a run they never saw. ``nvml`` and
    ``device_uuid`` (torch index -> UUID) are for tests; by default pynvml and torch.
    """
    if device_uuid is None:
        import torch

        if getattr(torch.version, "hip", None):
            return None, ROCM
        device_uuid = _torch_device_uuid
    if nvml is None:
        try:
            import pynvml

            nvml = pynvml
        except ImportError:
            return None, NOT_INSTALLED
    try:
        nvml.nvmlInit()
    except Exception as error:
        return None, f"NVML could not start: {describe_error(error)}"
    try:
        index, how = _locate(nvml, torch_device_index, device_uuid(torch_device_index))
        if index is None:
            nvml.nvmlShutdown()
            return None, how
        return Monitor(nvml, nvml.nvmlDeviceGetHandleByIndex(index), index, how), ""
    except Exception as error:
        with contextlib.suppress(Exception):  # already failing; report the first error
            nvml.nvmlShutdown()
        return (
            None,
            f"NVML could not open torch device {torch_device_index}: {describe_error(error)}",
        )
