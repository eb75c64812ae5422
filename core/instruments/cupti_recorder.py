"""Device activity recorded through CUPTI directly (NVIDIA's ``cupti-python``),
switched on and off around chosen stretches of a timed process.

Why not torch's profiler, which both the timed processes and the profiling
process fall back on without ``cupti-python``: a kernel can see it. While torch's profiler runs, ``torch.autograd.profiler._is_profiler_enabled``
and ``torch._C._autograd._profiler_enabled()`` read True, so a plugin that
behaves when it is watched and skips its work when it is not would pass any
accounting made through it. CUPTI's activity API, used directly, changes no
state a plugin reads through torch; and switching it costs microseconds
(on the H200: 0.03-0.05 ms for an enable or disable, evidence in
``docs/timing.md``), so it can be on for a few rounds drawn at random and off
for the rest. Its cost while on was 0.3-1.5% of a single-launch call's
event-timed figure there; the rounds it records are therefore read for their
launches, and their figures are left out of the verdict.

``cupti-python`` is optional (its CUDA major version must match the driver's
and torch's CUDA, so gemmreg cannot pin it): without it, :func:`open_recorder`
says why, and the caller records the accounting as not taken.
On driver branches before r610 CUPTI admits one activity subscriber per
process; a process that has this recorder runs no other profiler (the
profiling process records through it too, :mod:`gemmreg.timing.device_activity`),
and the recorder is opened once per process. In the profiling process it
also saves the seconds torch's profiler takes to set up and tear down (3.8 s
to start on the H200), most of that process's time at a small problem.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Protocol, SupportsInt

from gemmreg.instruments.activity_analysis import Activity

RECORD_BUFFER_BYTES = 8 << 20
"""Bytes per buffer CUPTI fills before handing it back: a sampled round is at
most some thousands of records of a few hundred bytes each."""

_KINDS = {"CONCURRENT_KERNEL": "kernel", "MEMCPY": "memcpy", "MEMSET": "memset"}
"""CUPTI's activity kinds that a call's device work can show up as, and
gemmreg's names for them (:data:`gemmreg.instruments.activity_analysis.ACTIVITY_KINDS`)."""


@functools.cache
def _cxa_demangle() -> Callable[[str], str | None] | None:
    """The C++ runtime's demangler (``abi::__cxa_demangle``), or None where
    there is no libstdc++ to load."""
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("stdc++") or "libstdc++.so.6")
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    raw = lib.__cxa_demangle
    raw.restype = ctypes.c_void_p
    raw.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]

    def demangle(name: str) -> str | None:
        status = ctypes.c_int(0)
        pointer = raw(name.encode(), None, None, ctypes.byref(status))
        if not pointer:
            return None
        try:
            return ctypes.string_at(pointer).decode(errors="replace")
        finally:
            libc.free(ctypes.c_void_p(pointer))

    return demangle


def demangled(name: str) -> str:
    """A kernel's name as torch's profiler shows it: CUPTI hands back the
    mangled symbol (``_ZN8cublasLt19splitKreduce_kernel...``), torch's
    profiler the demangled one (``void cublasLt::splitKreduce_kernel<...>()``),
    through the same C++ runtime call. Work accounting holds a timed call's
    kernels to the profiling process's by name, so both must use one form:
    on the H200 every cuBLAS call read as launching other kernels than its
    profile until the names were demangled here. Names that are not mangled
    (Triton's, nvjet's) come back as they are."""
    if not name.startswith("_Z"):
        return name
    demangle = _cxa_demangle()
    return (demangle(name) if demangle is not None else None) or name


class ActivityRecord(Protocol):
    """A CUPTI activity record as read here; a kernel's also has ``name`` and
    ``stream_id``, looked up where present."""

    @property
    def kind(self) -> SupportsInt: ...
    @property
    def start(self) -> SupportsInt: ...
    @property
    def end(self) -> SupportsInt: ...


def activities_from_records(
    records: Iterable[ActivityRecord], kind_names: dict[int, str]
) -> list[Activity]:
    """CUPTI activity records as gemmreg's :class:`Activity`, times in us from
    the first record's start. ``kind_names`` maps CUPTI's kind numbers to
    gemmreg's kind names; records of other kinds are dropped."""
    kept = [r for r in records if int(r.kind) in kind_names]
    if not kept:
        return []
    origin = min(int(r.start) for r in kept)
    out = []
    for r in kept:
        kind = kind_names[int(r.kind)]
        name = demangled(str(getattr(r, "name", "") or "")) if kind == "kernel" else kind
        out.append(
            Activity(
                name=name,
                kind=kind,
                stream=int(getattr(r, "stream_id", 0) or 0),
                start_us=(int(r.start) - origin) / 1000.0,
                end_us=(int(r.end) - origin) / 1000.0,
            )
        )
    return sorted(out, key=lambda a: (a.start_us, a.end_us))


class CuptiRecorder:
    """One process's CUPTI activity recording: :meth:`start` ... :meth:`stop`
    returns what the device ran in between (every stream of the process)."""

    def __init__(self, cupti: ModuleType):
        """:param cupti: ``cupti-python``'s ``cupti`` module (a stand-in in tests)."""
        self._cupti = cupti
        self._records: list[ActivityRecord] = []
        self._kinds = [getattr(cupti.ActivityKind, name) for name in _KINDS]
        self._names = {int(getattr(cupti.ActivityKind, k)): v for k, v in _KINDS.items()}
        cupti.activity_register_callbacks(self._requested, self._completed)

    def _requested(self) -> tuple[int, int]:
        return RECORD_BUFFER_BYTES, 0

    def _completed(self, activities: list[ActivityRecord]) -> None:
        self._records.extend(activities)

    def start(self) -> None:
        """Record from now on (the caller has synchronised the device),
        forgetting what was recorded before."""
        self._records.clear()
        self.resume()

    def resume(self) -> None:
        """Record again after :meth:`pause`, keeping what was recorded."""
        for kind in self._kinds:
            self._cupti.activity_enable(kind)

    def pause(self) -> None:
        """Stop recording for now (the caller has synchronised the device, so
        every activity of the stretch has ended and is kept)."""
        for kind in self._kinds:
            self._cupti.activity_disable(kind)

    def stop(self) -> list[Activity]:
        """Stop recording (the caller has synchronised the device) and return
        the activities recorded since :meth:`start`."""
        self.pause()
        self._cupti.activity_flush_all(1)
        found = activities_from_records(self._records, self._names)
        self._records.clear()
        return found


_OPENED: list[tuple[CuptiRecorder | None, str]] = []
"""The process's one answer of :func:`open_recorder`, once asked."""


def open_recorder() -> tuple[CuptiRecorder | None, str]:
    """The process's recorder, or None and why there is none. Made once per
    process and handed out again: a worker serves many tasks (a sweep's
    points, a timed process's and a profile's), and CUPTI's buffer callbacks
    are registered once, by the recorder's constructor."""
    if not _OPENED:
        _OPENED.append(_open())
    return _OPENED[0]


def _open() -> tuple[CuptiRecorder | None, str]:
    try:
        from cupti import cupti
    except Exception as error:  # not installed, or built for another CUDA
        return None, f"cupti-python not available ({type(error).__name__}: {error})"
    try:
        return CuptiRecorder(cupti), ""
    except Exception as error:  # another subscriber, an old driver
        return None, f"CUPTI activity recording refused: {type(error).__name__}: {error}"
