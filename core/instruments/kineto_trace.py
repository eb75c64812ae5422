"""torch's profiler trace read as gemmreg's device activities.

Where ``cupti-python`` is missing, the device work of a profile
(:mod:`gemmreg.timing.device_activity`) and of the timed calls
(:mod:`gemmreg.timing.work_recording`) is recorded through torch's own
profiler; its trace comes back as kineto events, whose accessors differ
from one torch build to the next. This reads them, as
:mod:`gemmreg.instruments.cupti_recorder` reads CUPTI's records, into the
:class:`~gemmreg.instruments.activity_analysis.Activity` records both analyses take.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gemmreg.instruments.activity_analysis import ACTIVITY_KINDS, Activity

if TYPE_CHECKING:
    from torch._C._autograd import _KinetoEvent
    from torch.profiler import profile

_KINETO_KINDS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
"""Kineto's ``activity_type()`` names for device work. Its other device-side
types (``gpu_user_annotation``, ``cuda_sync``, ``cuda_profiler_range``) are
spans drawn around work, not work, and are dropped."""

_DEVICE_TYPES = {"CUDA", "HIP"}


def _kind(event: _KinetoEvent) -> str | None:
    """The activity kind of a device event, or ``None`` when it is not device work.

    ``activity_type()`` is read when the torch build has it; older builds fall
    back on kineto's names for copies and sets (``Memcpy HtoD (...)``, ``Memset
    (Device)``), everything else on the device being a kernel.
    """
    activity_type = getattr(event, "activity_type", None)
    if callable(activity_type):
        return _KINETO_KINDS.get(str(activity_type()))
    name = str(event.name())
    if name.startswith("Memcpy"):
        return "memcpy"
    if name.startswith("Memset"):
        return "memset"
    return "kernel"


def _interval_ns(event: Any) -> tuple[int, int]:
    """Start and end in integer nanoseconds, from whichever clock accessors this torch has
    (untyped: older builds' events have accessors, in microseconds, that today's stubs lack)."""
    if hasattr(event, "start_ns"):
        start = int(event.start_ns())
        if hasattr(event, "end_ns"):
            return start, int(event.end_ns())
        return start, start + int(event.duration_ns())
    start = int(event.start_us()) * 1000
    return start, start + int(event.duration_us()) * 1000


def activities_from_events(events: Iterable[_KinetoEvent]) -> list[Activity]:
    """The device activities among a profiler's kineto events, timed from the first.

    Reads ``device_type()`` (``DeviceType.CUDA`` for device work, also on ROCm
    builds), ``name()``, ``device_resource_id()`` (the stream, for device work)
    and the timestamps (``start_ns``/``end_ns``, with fallbacks for builds that
    only have durations or microseconds): all in torch 2.13's stubs and in those
    of the older torch main read for this module, which lacked
    ``activity_type()`` (hence :func:`_kind`'s fallback). Host events (runtime
    calls, CPU ops) are skipped. Raises ``AttributeError`` when an accessor is
    missing: :func:`gemmreg.timing.device_activity.profile_calls` turns that
    into a reason.

    Why the times start at the trace's first device activity: kineto's clock
    counts nanoseconds since the Unix epoch, about 1.8e18 in 2026. As a float
    of microseconds that is about 1.8e15, where a double's steps are 0.25 us
    apart: every kernel time came out a multiple of 0.25 us (3% of a 7.5 us
    kernel; seen on an H200 in December 2026). The subtraction is done in
    integers, so the float keeps every nanosecond.
    """
    device_events = []
    for event in events:
        device_type = event.device_type()
        if getattr(device_type, "name", str(device_type)).split(".")[-1] not in _DEVICE_TYPES:
            continue
        kind = _kind(event)
        if kind not in ACTIVITY_KINDS:
            continue
        device_events.append((event, kind, _interval_ns(event)))
    origin = min((start for _, _, (start, _) in device_events), default=0)
    return [
        Activity(
            name=str(event.name()),
            kind=kind,
            stream=int(event.device_resource_id()),
            start_us=(start - origin) / 1000.0,
            end_us=(end - origin) / 1000.0,
        )
        for event, kind, (start, end) in device_events
    ]


def profiler_activities(prof: profile) -> list[Activity]:
    """The device activities a stopped torch profiler recorded, from its
    kineto results (private torch API, kept here). torch types those as
    optional; a profiler that was entered and exited always has them."""
    kineto = prof.profiler
    if kineto is None or kineto.kineto_results is None:
        raise RuntimeError("torch's profiler kept no kineto results")
    return activities_from_events(kineto.kineto_results.events())
