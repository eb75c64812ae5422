"""The pure half of :mod:`gemmreg.timing.device_activity`: reading a device trace.

Given the device activities recorded around a sequence of marker kernels on
the caller's stream, :func:`analyse` charges each activity to a call, adds up
the device time and launches per call, and finds work that escaped its call's
interval. No torch here: it is tested on constructed traces.
"""

from __future__ import annotations

import bisect
import collections
import statistics
from collections.abc import Sequence

import attrs
from gemmreg.instruments.device_profile import DeviceProfile

ActivityKind = str
"""``kernel``, ``memcpy`` or ``memset``: the device activities a call can cause."""

ACTIVITY_KINDS: tuple[str, ...] = ("kernel", "memcpy", "memset")

TIMESTAMP_SLACK_US = 1.0
"""An activity may cross its call's boundary by this much and still count as
inside. Device timestamps of dependent work on two streams are taken at
slightly different points of the hardware's pipeline; a false INVALID is the
worst outcome, and escaping by under a microsecond cannot buy a kernel a
meaningful speed-up. Real escapes (a GEMM not joined back) are tens of
microseconds and more; a side kernel that does not wait for the caller's
stream starts a whole marker early."""

KERNEL_NAMES_KEPT = 16
"""Distinct kernel names a profile keeps: a call is one to a few kernels; a
plugin that launches hundreds of different ones is recorded by its first few."""

NAME_SHOWN = 60
"""Kernel names (C++ templates) can run to hundreds of characters; a reason
shows this many and an ellipsis, enough to recognise the kernel."""


@attrs.frozen(kw_only=True)
class Activity:
    """One interval of device work as the profiler recorded it."""

    name: str
    kind: ActivityKind
    stream: int
    start_us: float
    end_us: float

    @property
    def duration_us(self) -> float:
        return max(0.0, self.end_us - self.start_us)


def _short(name: str) -> str:
    return name if len(name) <= NAME_SHOWN else name[:NAME_SHOWN] + "..."


def _union_us(intervals: Sequence[tuple[float, float]]) -> float:
    """Total length covered by the intervals, overlaps counted once."""
    total = 0.0
    reach = float("-inf")
    for start, end in sorted(intervals):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


@attrs.frozen
class _Escape:
    """One activity outside its call's interval: by how much, and which way."""

    activity: Activity
    call: int | None
    """The call it is charged to; ``None`` when it lies outside the whole sequence."""
    excess_us: float
    how: str


def _escape_of(activity: Activity, markers: Sequence[Activity], call: int) -> _Escape | None:
    """Where ``activity`` (which started at or after marker ``call``) breaks the rules."""
    first, last = markers[0], markers[-1]
    if activity.start_us < first.start_us:
        gap = first.start_us - activity.start_us
        return _Escape(activity, None, gap, f"started {gap:.0f} us before the first marker")
    if activity.start_us >= last.start_us:
        gap = activity.end_us - last.start_us
        return _Escape(activity, None, gap, f"ran {gap:.0f} us past the start of the last marker")
    opening, closing = markers[call], markers[call + 1]
    early = opening.end_us - activity.start_us
    late = activity.end_us - closing.start_us
    if early > TIMESTAMP_SLACK_US and early >= late:
        how = (
            f"started {early:.0f} us before the call's start marker ended "
            "(it did not wait for the caller's stream)"
        )
        return _Escape(activity, call, early, how)
    if late > TIMESTAMP_SLACK_US:
        how = (
            f"ended {late:.0f} us after the call's end marker started "
            "(it was not joined back to the caller's stream)"
        )
        return _Escape(activity, call, late, how)
    return None


def _describe(escape: _Escape) -> str:
    a = escape.activity
    return f"{_short(a.name)} on stream {a.stream} {escape.how}"


def _escape_reason(escapes: Sequence[_Escape], calls: int) -> str | None:
    if not escapes:
        return None
    parts = []
    inside = [e for e in escapes if e.call is not None]
    if inside:
        worst = max(inside, key=lambda e: e.excess_us)
        count = len({e.call for e in inside})
        parts.append(
            f"{count} of {calls} calls had device work outside their interval: {_describe(worst)}"
        )
    outside = [e for e in escapes if e.call is None]
    if outside:
        worst = max(outside, key=lambda e: e.excess_us)
        noun = "activity" if len(outside) == 1 else "activities"
        parts.append(
            f"{len(outside)} device {noun} lay outside the marker sequence: {_describe(worst)}"
        )
    return "; ".join(parts)


def split_markers(
    activities: Sequence[Activity], marker_name: str, calls: int, expected: int
) -> tuple[list[Activity], list[Activity]] | str:
    """Split the trace into the markers (``expected`` of them, on one stream,
    in order of start) and the rest, or say why it cannot be read."""
    markers = sorted((a for a in activities if marker_name in a.name), key=lambda a: a.start_us)
    work = [a for a in activities if marker_name not in a.name]
    if not markers:
        return (
            f"no marker kernel {marker_name!r} in the device trace ({len(work)} other activities)"
        )
    if len(markers) != expected:
        return (
            f"expected {expected} marker kernels {marker_name!r} in the device trace "
            f"for {calls} calls, found {len(markers)} (does the kernel launch one itself?)"
        )
    streams = {m.stream for m in markers}
    if len(streams) != 1:
        return f"the marker kernels ran on several streams {sorted(streams)}, not the caller's one"
    return markers, work


def analyse(activities: Sequence[Activity], marker_name: str, calls: int) -> DeviceProfile | str:
    """Per-call device time and escaped work, from a trace of ``M c1 M c2 ... cN M``.

    ``M`` is a marker kernel on the caller's stream, launched before each call
    and after the last. Call ``i``'s activities must lie within [end of marker
    ``i``, start of marker ``i+1``]. An activity that starts before the end of
    marker ``i`` (side-stream work that did not wait for the caller's stream),
    ends after the start of marker ``i+1`` (work not joined back), or lies
    before the first / after the last marker, is escaped work.

    Activities are charged to the call whose start marker is the last one to
    start at or before them (clamped to the first and last call), so escaped
    work still counts in that call's kernel time and launches.

    Pure. Returns a reason string, never raises, when the trace cannot be read
    as that sequence (no markers, the wrong number of them, markers on several
    streams): the caller reports the device profile as unavailable.
    """
    if calls < 1:
        return f"cannot analyse {calls} calls: need at least one"
    charged = _charge(activities, marker_name, calls)
    if isinstance(charged, str):
        return charged
    every = list(range(calls))
    return _profile(*charged, calls=every, watched=every, interleaved=False)


def analyse_interleaved(
    activities: Sequence[Activity],
    marker_name: str,
    owners: Sequence[str],
    timed: Sequence[bool] | None = None,
) -> dict[str, DeviceProfile] | str:
    """Per-kernel profiles from one trace whose calls belong to several kernels.

    ``owners[i]`` names the kernel of call ``i``; the calls went round by
    round, every kernel once (or, with warm-up calls, a few times in a row)
    per round. ``timed[i]`` False makes call ``i`` a warm-up: its work is
    checked for escapes but not counted in the figures. Why interleave:
    clocks on a power-limited GPU move over a second, and two kernels
    profiled one after the other would each see their own clock; the timed
    call of every kernel in round ``i`` ran in that round, so their per-call
    ratios pair (``call_ms``). Each profile's ``escaped`` names only its own
    calls' escaped work.
    """
    counted = [True] * len(owners) if timed is None else list(timed)
    calls_of: dict[str, list[int]] = {}
    for index, owner in enumerate(owners):
        calls_of.setdefault(owner, []).append(index)
    readable = bool(owners) and len(counted) == len(owners)
    if not readable or not all(any(counted[i] for i in ix) for ix in calls_of.values()):
        return f"cannot analyse {len(owners)} calls, {sum(counted)} timed: every kernel needs one"
    charged = _charge(activities, marker_name, len(owners))
    if isinstance(charged, str):
        return charged
    return {
        owner: _profile(
            *charged, calls=[i for i in indices if counted[i]], watched=indices, interleaved=True
        )
        for owner, indices in calls_of.items()
    }


def _charge(
    activities: Sequence[Activity], marker_name: str, calls: int
) -> tuple[list[list[Activity]], list[_Escape]] | str:
    """Each call's activities, and the escaped ones (see :func:`analyse`)."""
    split = split_markers(activities, marker_name, calls, calls + 1)  # M c1 M ... cN M
    if isinstance(split, str):
        return split
    markers, work = split
    starts = [m.start_us for m in markers]
    per_call: list[list[Activity]] = [[] for _ in range(calls)]
    escapes: list[_Escape] = []
    for activity in sorted(work, key=lambda a: a.start_us):
        call = min(max(bisect.bisect_right(starts, activity.start_us) - 1, 0), calls - 1)
        per_call[call].append(activity)
        escape = _escape_of(activity, markers, call)
        if escape is not None:
            escapes.append(escape)
    return per_call, escapes


def _profile(
    per_call: list[list[Activity]],
    escapes: list[_Escape],
    *,
    calls: list[int],
    watched: list[int],
    interleaved: bool,
) -> DeviceProfile:
    """The figures of the given calls and the escapes of the watched ones
    (indices into ``per_call``). Escaped activities outside the whole
    sequence count against every profile."""
    chosen = set(watched)
    work = [a for i in calls for a in per_call[i]]
    summed = [sum(a.duration_us for a in per_call[i]) for i in calls]
    busy = [_union_us([(a.start_us, a.end_us) for a in per_call[i]]) for i in calls]
    mine = [e for e in escapes if e.call is None or e.call in chosen]
    return DeviceProfile(
        calls=len(calls),
        kernel_ms_per_call=statistics.median(summed) / 1000.0,
        busy_ms_per_call=statistics.median(busy) / 1000.0,
        launches_per_call=len(work) / len(calls),
        streams=sorted({a.stream for a in work}),
        escaped=_escape_reason(mine, len(watched)),
        kernels=sorted({a.name for a in work if a.kind == "kernel"})[:KERNEL_NAMES_KEPT],
        call_ms=[t / 1000.0 for t in summed],
        interleaved=interleaved,
        call_kernels=_typical_call([per_call[i] for i in calls]),
    )


def _typical_call(calls: list[list[Activity]]) -> tuple[tuple[str, int], ...]:
    """The kernels the most calls launched, as a multiset (sorted name, count
    pairs; copies and sets left out): what the timed processes' work
    accounting holds their calls to (:mod:`gemmreg.instruments.work_accounting`)."""
    patterns = collections.Counter(
        tuple(sorted(collections.Counter(a.name for a in c if a.kind == "kernel").items()))
        for c in calls
    )
    return patterns.most_common(1)[0][0][:KERNEL_NAMES_KEPT] if patterns else ()
