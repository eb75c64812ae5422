"""Readings of a GPU's clocks, power and throttle state, and what they say about a round.

This half needs no NVML: a :class:`Reading` is plain data that crosses the worker
boundary as JSON, and the judgements on a trace of readings (drop this round?
has the clock settled? what did the run see?) are pure functions, tested on
recorded and constructed traces. :mod:`gemmreg.instruments.gpu_monitor` takes the readings.

What was seen on the H200 (driver 580, recorded through NVML under a bf16
8192^3 matmul loop): the ``sw_power_cap`` reason is active in every reading,
power sits at the 700 W cap, and the SM clock jumps from one reading to the
next (1425-1575 MHz in an 8-s soak, spikes to 1905 in a longer run) while its
median holds near 1470 MHz (tests/fixtures/nvml/recorded/).
That shapes both rules below: the power cap cannot drop a round, and a settled
clock is a settled *median*, not a quiet one.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from gemmreg.contract.declaration_checks import strings

REASON_BITS: tuple[tuple[str, str, int], ...] = (
    ("gpu_idle", "GpuIdle", 0x1),
    ("applications_clocks_setting", "ApplicationsClocksSetting", 0x2),
    ("sw_power_cap", "SwPowerCap", 0x4),
    ("hw_slowdown", "HwSlowdown", 0x8),
    ("sync_boost", "SyncBoost", 0x10),
    ("sw_thermal_slowdown", "SwThermalSlowdown", 0x20),
    ("hw_thermal_slowdown", "HwThermalSlowdown", 0x40),
    ("hw_power_brake_slowdown", "HwPowerBrakeSlowdown", 0x80),
    ("display_clocks_setting", "DisplayClockSetting", 0x100),
    ("board_limit", "BoardLimit", 0x200),
    ("reliability", "Reliability", 0x400),
)
"""NVML's clocks-event (formerly "throttle") reason bits: our name, the suffix of
pynvml's ``nvmlClocksEventReason*`` / ``nvmlClocksThrottleReason*`` constant, and
the bit. The bits are NVML's ABI and never change; a test checks them against
the real pynvml where it is installed."""

THROTTLE_DROP_REASONS: frozenset[str] = frozenset(
    {
        "hw_slowdown",
        "sw_thermal_slowdown",
        "hw_thermal_slowdown",
        "hw_power_brake_slowdown",
        "board_limit",
        "reliability",
    }
)
"""Reasons that drop a round: the clock was pulled down by an event that comes
and goes (heat, the board's power brake, an external slowdown signal, a board
or reliability limit). Such an event can land in one kernel's slot and not in
another's, so the round no longer compares like with like. The round is
dropped for every kernel, so the remaining rounds stay paired."""

RECORDED_REASONS: frozenset[str] = frozenset(
    {
        "gpu_idle",
        "applications_clocks_setting",
        "sw_power_cap",
        "sync_boost",
        "display_clocks_setting",
    }
)
"""Reasons recorded but never dropping a round.

``sw_power_cap`` above all: the H200 is power-limited. Under heavy bf16 work it
runs at its 700 W cap in every reading (seen on the machine), with the clock
set by the power manager. That is the GPU's steady operating state, not an
accident: dropping on it would drop every round. What makes it fair is the
protocol: every kernel is timed in every round for the same budget,
interleaved, so each meets the cap equally. ``gpu_idle`` is expected between
kernel slots, where readings are taken; ``applications_clocks_setting``,
``sync_boost`` and ``display_clocks_setting`` are settings that hold for the
whole run (the device record reports them). A reason in neither set (a bit
this table does not know, named ``unknown_0x...``) drops the round: what is
not known to be harmless is not trusted."""

DROP_VIOLATIONS: frozenset[str] = frozenset({"thermal", "board_limit", "reliability"})
"""NVML violation counters (cumulative ns the clock was held down) whose advance
within a round drops it. They catch a slowdown that began and ended between two
readings, which the reason bits alone would miss. The ``power`` counter is read
and recorded but, like ``sw_power_cap``, never drops: on the H200 it advances by
about 0.9 s per second under load."""

VIOLATION_DROP_NS = 0
"""A drop counter that advances by more than this many ns drops the round: any
advance at all, since each one is time the clock was really held down."""

STEADY_WINDOW_S = 4.0
"""Heat-soak window: the SM clock must have held its level over the last this
many seconds. Long enough that each half holds a dozen or more readings at the
protocol's rate, short enough that soak costs seconds, not minutes (the H200
settles within about a second of full bf16 load)."""

STEADY_TOLERANCE = 0.03
"""Relative difference allowed between the median SM clock of the window's two
halves. The power-capped H200 clock scatters by several percent reading to
reading around a median that moves by under 2 % once loaded (recorded); 3 % of
the median (about 45 MHz at 1470 MHz) passes that and still rejects a ramp."""

STEADY_MIN_HALF_READINGS = 3
"""Fewest SM-clock readings in each half of the window before it can be judged:
a median of one or two scattered readings says nothing."""


def _ints(raw: Mapping[str, Any]) -> dict[str, int]:
    return {str(k): int(v) for k, v in raw.items()}


@attrs.frozen(kw_only=True)
class Reading:
    """One look at the GPU. Every field NVML refused is None (or absent from
    ``violations_ns``) and named in ``unreadable``, so a gap is never mistaken for a
    calm GPU."""

    t_s: float
    """time.monotonic() when read (comparable within one process only)."""
    sm_mhz: int | None
    mem_mhz: int | None
    power_w: float | None
    """NVML's power usage; on Ampere and later a one-second average."""
    temperature_c: int | None
    reasons: tuple[str, ...] = attrs.field(converter=lambda v: tuple(sorted(v)))
    """Active clocks-event reasons, sorted (see REASON_BITS)."""
    violations_ns: Mapping[str, int] = attrs.field(factory=dict, converter=_ints)
    """Cumulative NVML violation counters where supported, else {}."""
    unreadable: tuple[str, ...] = attrs.field(default=(), converter=strings)
    """Fields NVML refused in this reading ("power_w", "reasons", "violation:thermal")."""

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reading:
        """The inverse of ``to_dict`` after a trip through JSON (lists for tuples)."""
        return cls(
            t_s=float(data["t_s"]),
            sm_mhz=data.get("sm_mhz"),
            mem_mhz=data.get("mem_mhz"),
            power_w=data.get("power_w"),
            temperature_c=data.get("temperature_c"),
            reasons=data.get("reasons", ()),
            violations_ns=data.get("violations_ns", {}),
            unreadable=data.get("unreadable", ()),
        )


def decode_reasons(mask: int) -> tuple[str, ...]:
    """Reason names for an NVML bit mask; unknown bits become ``unknown_0x...``."""
    names = [name for name, _, bit in REASON_BITS if mask & bit]
    known = 0
    for _, _, bit in REASON_BITS:
        known |= bit
    rest = mask & ~known
    names += [f"unknown_{1 << i:#x}" for i in range(rest.bit_length()) if rest >> i & 1]
    return tuple(sorted(names))


def round_drop_reason(readings: Sequence[Reading]) -> str | None:
    """Why the round these readings were taken in must be dropped, or None.

    A reason that is not known to be harmless (THROTTLE_DROP_REASONS, or any name
    outside RECORDED_REASONS) in any reading drops it, and so does a counter in
    DROP_VIOLATIONS that advanced between the first and last reading that have it.
    It judges what was read: with no readings, or fields NVML refused, it has
    nothing to object to; ``trace_summary`` counts the refusals.
    """
    for index, reading in enumerate(readings):
        for reason in reading.reasons:
            if reason in THROTTLE_DROP_REASONS or reason not in RECORDED_REASONS:
                return f"{reason} active (reading {index + 1} of {len(readings)})"
    for counter in sorted(DROP_VIOLATIONS):
        values = [r.violations_ns[counter] for r in readings if counter in r.violations_ns]
        if len(values) < 2:
            continue
        advance = values[-1] - values[0]
        if advance < 0:
            return f"{counter} violation counter went backwards by {-advance / 1e6:.1f} ms"
        if advance > VIOLATION_DROP_NS:
            return f"{counter} violation counter advanced by {advance / 1e6:.1f} ms"
    return None


def clock_steady(
    readings: Sequence[Reading],
    window_s: float = STEADY_WINDOW_S,
    tolerance: float = STEADY_TOLERANCE,
) -> bool:
    """Whether the SM clock has settled: the heat-soak criterion.

    The readings must span at least ``window_s``; the last ``window_s`` of them
    are split into halves by time, and the clock is steady when the halves'
    median SM clocks differ by at most ``tolerance`` of the window's median. The
    medians, not every reading, because a power-capped H200's clock scatters by
    more than any useful tolerance around a level that does not move; a ramp (idle boost to load, or a
    chip still warming) moves the level and fails. Too few clock readings in a
    half (STEADY_MIN_HALF_READINGS) is not steady yet. With no SM clock readable
    at all it returns True once the window has passed: there is nothing to wait
    for, and the caller records that the clock was unreadable.
    """
    if not readings or readings[-1].t_s - readings[0].t_s < window_s:
        return False
    end = readings[-1].t_s
    middle = end - window_s / 2
    window = [r for r in readings if r.t_s >= end - window_s]
    if all(r.sm_mhz is None for r in window):
        return True
    first = [r.sm_mhz for r in window if r.sm_mhz is not None and r.t_s < middle]
    second = [r.sm_mhz for r in window if r.sm_mhz is not None and r.t_s >= middle]
    if min(len(first), len(second)) < STEADY_MIN_HALF_READINGS:
        return False
    level = statistics.median(first + second)
    return abs(statistics.median(second) - statistics.median(first)) <= tolerance * level


def _spread(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def trace_summary(readings: Sequence[Reading]) -> dict[str, Any]:
    """What a trace saw, for the report and the JSON: spreads, reasons, counters, gaps."""
    counters: dict[str, int] = {}
    for name in sorted({k for r in readings for k in r.violations_ns}):
        values = [r.violations_ns[name] for r in readings if name in r.violations_ns]
        counters[name] = values[-1] - values[0]
    return {
        "readings": len(readings),
        "span_s": readings[-1].t_s - readings[0].t_s if readings else 0.0,
        "sm_mhz": _spread([r.sm_mhz for r in readings if r.sm_mhz is not None]),
        "mem_mhz": _spread([r.mem_mhz for r in readings if r.mem_mhz is not None]),
        "power_w": _spread([r.power_w for r in readings if r.power_w is not None]),
        "temperature_c": _spread(
            [r.temperature_c for r in readings if r.temperature_c is not None]
        ),
        "reasons": dict(sorted(Counter(n for r in readings for n in r.reasons).items())),
        "violations_advanced_ns": counters,
        "unreadable": dict(sorted(Counter(n for r in readings for n in r.unreadable).items())),
    }


def _gib(used: Any) -> str:
    return f"{used / 2**30:.1f} GiB" if isinstance(used, int) else "memory unknown"


def busy_reason(record: Mapping[str, Any]) -> str | None:
    """Why a verdict taken on this GPU is flagged as shared, or None.

    ``record`` is a device record (``Monitor.device_record``). Another process on
    the GPU competes for its SMs, memory bandwidth and power budget at moments
    the protocol does not control, so a verdict taken beside it is flagged.
    """
    others = record.get("other_processes")
    if not isinstance(others, list) or not others:
        return None
    described = []
    for proc in others:
        name = proc.get("name")
        name = name if isinstance(name, str) and not name.startswith("unavailable") else "?"
        described.append(f"pid {proc.get('pid')} ({name}, {_gib(proc.get('used_memory_bytes'))})")
    noun = "process" if len(others) == 1 else "processes"
    return f"{len(others)} other {noun} on the GPU: " + ", ".join(described)
