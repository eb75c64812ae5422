"""What the device did per call of one kernel (:class:`DeviceProfile`), as
:mod:`gemmreg.instruments.activity_analysis` reads it from a trace and ``run.json``
keeps it. Its own module so that the reading stays short."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs


def _int_tuple(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _str_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(str(v) for v in values)


def _launches(values: Iterable[Any] | None) -> tuple[tuple[str, int], ...] | None:
    return None if values is None else tuple((str(p[0]), int(p[1])) for p in values)


def _float_tuple(values: Iterable[float]) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


@attrs.frozen(kw_only=True)
class DeviceProfile:
    """What the device did per call, and whether any of it escaped the call."""

    calls: int
    kernel_ms_per_call: float
    """Median over calls of the summed durations of the call's device
    activities (kernels, memcpy, memset), markers excluded."""
    busy_ms_per_call: float
    """Median over calls of the union of those intervals (overlap counted once)."""
    launches_per_call: float
    """Mean number of device activities per call."""
    streams: tuple[int, ...] = attrs.field(converter=_int_tuple)
    """The streams the calls' work ran on."""
    escaped: str | None = None
    """``None``, or why the calls' work escaped their intervals (the kernel is INVALID)."""
    kernels: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    """The names of the device kernels the calls launched, distinct and sorted
    (at most :data:`~gemmreg.instruments.activity_analysis.KERNEL_NAMES_KEPT`):
    which code the timing ran, so a profiler's capture can be checked to be
    of the same kernels."""
    call_ms: tuple[float, ...] = attrs.field(default=(), converter=_float_tuple)
    """Each call's summed device time, in call order (empty in runs saved before it was kept)."""
    interleaved: bool = False
    """True when the calls alternated, round by round, with those of the other
    kernels profiled in the same trace (:func:`analyse_interleaved`): call ``i``
    of every such kernel ran in round ``i``, so their ratios pair by round."""
    call_kernels: tuple[tuple[str, int], ...] | None = attrs.field(
        default=None, converter=_launches
    )
    """The kernels the most calls launched, as sorted ``(name, count)`` pairs
    (copies and sets left out): what every timed call must launch at least
    (:mod:`gemmreg.instruments.work_accounting`). None in runs saved before it was kept."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "kernel_ms_per_call": self.kernel_ms_per_call,
            "busy_ms_per_call": self.busy_ms_per_call,
            "launches_per_call": self.launches_per_call,
            "streams": list(self.streams),
            "escaped": self.escaped,
            "kernels": list(self.kernels),
            "call_ms": list(self.call_ms),
            "interleaved": self.interleaved,
            "call_kernels": None
            if self.call_kernels is None
            else [list(pair) for pair in self.call_kernels],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeviceProfile:
        return cls(
            calls=int(data["calls"]),
            kernel_ms_per_call=float(data["kernel_ms_per_call"]),
            busy_ms_per_call=float(data["busy_ms_per_call"]),
            launches_per_call=float(data["launches_per_call"]),
            streams=data["streams"],
            escaped=data.get("escaped"),
            kernels=data.get("kernels", ()),
            call_ms=data.get("call_ms", ()),
            interleaved=bool(data.get("interleaved", False)),
            call_kernels=data.get("call_kernels"),
        )
