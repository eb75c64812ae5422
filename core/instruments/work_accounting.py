"""Work accounting: did every timed call launch the device work that a checked call did?

Events time a stream, not work: a plugin that skips its GEMM on a repeated
call with unchanged operands (no launch at all), copies a cached result into
C (one copy instead of the GEMM), or skips its work when it senses it is
being timed, gets a FASTER verdict at launch-bound shapes while its output
checks pass. The timed processes therefore record the device activity of
their timed calls (:mod:`gemmreg.timing.work_recording`); this module, pure
and torch-free, charges that activity to calls (:func:`attribute`), sums it
up per kernel (:func:`account`) and judges it (:func:`invalid_reasons`).

The rules, and the legitimate variation they leave alone:

- A timed call that launched no device work (no kernel, copy or set) is
  INVALID: a GEMM on a GPU writes C on the device every call.
- A timed call must launch at least the kernels of *the checked call*: one
  more call made after the rounds, in the same recording, on fresh operands
  (new values at new addresses, so no cache can answer it) whose output is
  verified. Not the precheck's call: that is the very first call, where a
  Triton autotuner benchmarks its configurations and a JIT compiles, and it
  ran before the recording began (CUPTI is set up only after every kernel's
  first call: on the H200, Triton kernels prepared under CUPTI crashed now
  and then).
- A timed call must also launch at least the kernels of the profiling
  process's typical call (:attr:`DeviceProfile.call_kernels`): a kernel that
  launches its GEMM there but not in the timed processes is caught even
  where its checked call was cheap too.
- Calls are compared as multisets of kernel names (``name -> count``), so
  multi-launch kernels pass as they are: split-K's partial and reduce
  kernels, a memset and an atomic kernel, a GEMM and a cast. Copies and
  sets (``memcpy``, ``memset``) count as work for the first rule but not in
  the multisets: a kernel may set a workspace on some calls and not others
  (a new placement's first call), and a copy in place of the GEMM shows as
  the GEMM missing anyway.
- "At least" (a multiset that contains the other): extra kernels only add
  device time, so a call that launched the checked call's kernels and more
  is never flagged (a lazily created buffer's fill on a new placement).
  Names, not durations: cuBLAS picks the same kernel for the same shape,
  dtype and alignment in every process, and a Triton kernel's name is its
  function's, whatever the configuration its autotuner chose.
- Work that depends on the operands and is kept across calls (a result, or
  a prepacked B, cached by the operands' addresses or versions) is work the
  timed calls skipped: the checked call on new operands does it, the timed
  calls on unchanged ones do not, and the kernel is INVALID, as one that
  copies a cached result is. A timing is of ``C = A @ B`` for the operands
  given, not of a repeat.
- gemmreg's own kernels are never charged to a call: the L2 flush, the
  stream hold and any poisoning of C run on the caller's stream *between*
  the two marker kernels that bracket each call, and only the caller's
  stream's work between a call's markers is its own; work on any other
  stream counts for the call it started under.
"""

from __future__ import annotations

import bisect
import collections
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from gemmreg.instruments.activity_analysis import NAME_SHOWN, Activity, split_markers

Launches = tuple[tuple[str, int], ...]
"""A multiset of kernel names, as sorted ``(name, count)`` pairs."""

PATTERNS_KEPT = 4
"""Distinct launch patterns a kernel's accounting keeps, most common first:
an honest kernel has one; a cheater two (the real call and the cheap one).
The rest are kept as one pattern, their common part (each name at its
fewest): it contains a reference exactly when every one of them does, so
the rules judge the calls they hold as they would judge each (a reason
then counts, and shows, the rest as one: an upper bound on the calls
short of the reference, never a false INVALID)."""


def _launches(value: Iterable[Sequence[Any]]) -> Launches:
    return tuple((str(pair[0]), int(pair[1])) for pair in value)


def _optional_launches(value: Iterable[Sequence[Any]] | None) -> Launches | None:
    return None if value is None else _launches(value)


def launches_of(activities: Iterable[Activity]) -> Launches:
    """The kernels among ``activities``, as a multiset (copies and sets left out)."""
    counts = collections.Counter(a.name for a in activities if a.kind == "kernel")
    return tuple(sorted(counts.items()))


def contains(larger: Launches, smaller: Launches) -> bool:
    """Whether ``larger`` launched every kernel of ``smaller``, as often or more."""
    have = dict(larger)
    return all(have.get(name, 0) >= count for name, count in smaller)


def shown(launches: Launches) -> str:
    """A multiset in a reason: names shortened as the device profile's are."""
    if not launches:
        return "no kernel"
    parts = []
    for name, count in launches:
        name = name if len(name) <= NAME_SHOWN else name[:NAME_SHOWN] + "..."
        parts.append(f"{name} x{count}")
    return ", ".join(parts)


@attrs.frozen(kw_only=True)
class LaunchPattern:
    """Timed calls that launched the same kernels."""

    kernels: Launches = attrs.field(converter=_launches)
    calls: int


@attrs.frozen(kw_only=True)
class WorkAccounting:
    """One kernel's timed calls in one process, as their device work shows them."""

    calls: int = 0
    """Timed calls recorded (heat soak and rounds: every one, not a sample)."""
    empty: int = 0
    """Of them, calls during which the device ran nothing for the kernel."""
    patterns: tuple[LaunchPattern, ...] = ()
    """The distinct kernel multisets of the calls that did launch work, most
    common first (at most :data:`PATTERNS_KEPT`, and the common part of the rest)."""
    checked: Launches | None = attrs.field(default=None, converter=_optional_launches)
    """The checked call's kernels (fresh operands, output verified), or None."""
    checked_note: str = ""
    """Why there is no checked call, or ''."""
    unavailable: str = ""
    """Why this kernel's timed calls were not accounted for, or ''."""


def attribute(
    activities: Sequence[Activity], marker_name: str, calls: int
) -> list[list[Activity]] | str:
    """Each call's device activities, from a trace where every call was
    bracketed by two marker kernels on the caller's stream (``M c M``), or
    why the trace cannot be read that way.

    On the caller's stream a call owns what started between its opening and
    closing marker: the flush, the hold and any poisoning of C that gemmreg
    queues between calls lie outside both and are nobody's. On any other
    stream a call owns what started between its opening marker and the next
    call's (the last call: everything after it), so side-stream work counts
    even where it was not joined back. The markers must number exactly
    ``2 * calls`` on one stream: a plugin that launches the marker itself, or
    a profiler that dropped records, makes the trace unreadable, never clean.
    """
    split = split_markers(activities, marker_name, calls, 2 * calls)  # M c M per call
    if isinstance(split, str):
        return split
    markers, work = split
    caller = markers[0].stream
    opens = [m.start_us for m in markers[0::2]]
    closes = [m.start_us for m in markers[1::2]]
    per_call: list[list[Activity]] = [[] for _ in range(calls)]
    for activity in work:
        call = bisect.bisect_right(opens, activity.start_us) - 1
        if call < 0:
            continue
        if activity.stream == caller and activity.start_us >= closes[call]:
            continue
        per_call[call].append(activity)
    return per_call


def account(
    per_call: Sequence[Sequence[Activity]],
    owners: Sequence[str],
    checked: Sequence[bool],
) -> dict[str, WorkAccounting]:
    """Each owner's accounting: ``owners[i]`` made call ``i``, which was its
    checked call where ``checked[i]`` (at most one each; the last counts)."""
    timed: dict[str, list[Launches]] = {}
    empty: dict[str, int] = collections.Counter()
    checked_of: dict[str, Launches] = {}
    for work, owner, is_checked in zip(per_call, owners, checked, strict=True):
        if is_checked:
            checked_of[owner] = launches_of(work)
            continue
        timed.setdefault(owner, [])
        if work:
            timed[owner].append(launches_of(work))
        else:
            empty[owner] += 1
    out = {}
    for owner in dict.fromkeys(owners):
        out[owner] = WorkAccounting(
            calls=len(timed.get(owner, [])) + empty[owner],
            empty=empty[owner],
            patterns=_patterns(timed.get(owner, [])),
            checked=checked_of.get(owner),
            checked_note="" if owner in checked_of else "no checked call was recorded",
            unavailable="" if owner in timed else "no timed call of it was recorded",
        )
    return out


def _patterns(calls: Sequence[Launches]) -> tuple[LaunchPattern, ...]:
    """The most common multisets, and the common part of the rest (:data:`PATTERNS_KEPT`)."""
    ranked = collections.Counter(calls).most_common()
    kept = [LaunchPattern(kernels=k, calls=n) for k, n in ranked[:PATTERNS_KEPT]]
    rest = ranked[PATTERNS_KEPT:]
    if rest:
        common = collections.Counter(dict(rest[0][0]))
        for kernels, _ in rest[1:]:
            common &= collections.Counter(dict(kernels))
        kept.append(LaunchPattern(kernels=sorted(common.items()), calls=sum(n for _, n in rest)))
    return tuple(kept)


def invalid_reasons(accounting: WorkAccounting, profiled: Sequence[Launches] = ()) -> list[str]:
    """Why these timed calls cannot be trusted, or []. ``profiled``: the
    typical call's kernels of each profiling process that recorded one."""
    if accounting.unavailable or not accounting.calls:
        return []
    reasons = []
    if accounting.empty:
        reasons.append(
            f"launched no device work in {accounting.empty} of {accounting.calls} "
            "recorded timed calls"
        )
    references = []
    if accounting.checked is not None:
        references.append(
            ("the checked call (fresh operands, output verified)", accounting.checked)
        )
    references += [("the profiling process's calls", launches) for launches in profiled]
    for what, reference in references:
        short = [p for p in accounting.patterns if not contains(p.kernels, reference)]
        if short:
            worst = short[0]
            count = sum(p.calls for p in short)
            reasons.append(
                f"{count} of {accounting.calls} timed calls launched {shown(worst.kernels)}, "
                f"where {what} launched {shown(reference)}"
            )
    return reasons


def profiled_launches(profiles: Iterable[Mapping[str, object]]) -> list[Launches]:
    """The typical call's kernels of each saved device profile that kept them."""
    out = []
    for profile in profiles:
        kernels = profile.get("call_kernels")
        if isinstance(kernels, (list, tuple)):
            out.append(_launches(kernels))
    return out


def process_findings(
    accountings: Sequence[tuple[int, WorkAccounting | None]],
    profiles: Iterable[Mapping[str, object]],
) -> tuple[list[str], list[str]]:
    """A kernel's INVALID reasons and flags from each timed process's
    accounting (``(process, accounting)``) and its saved device profiles.
    A flag shared by several processes is said once, naming them all."""
    profiled = profiled_launches(profiles)
    invalid: list[str] = []
    flagged: dict[str, list[str]] = {}
    for process, accounting in accountings:
        if accounting is None:
            continue
        if accounting.unavailable:
            flagged.setdefault(f"no work accounting: {accounting.unavailable}", []).append(
                str(process)
            )
            continue
        invalid += [f"process {process}: {why}" for why in invalid_reasons(accounting, profiled)]
        if accounting.checked is None and accounting.checked_note:
            flagged.setdefault(f"work accounting: {accounting.checked_note}", []).append(
                str(process)
            )
    flags = [f"process {', '.join(which)}: {flag}" for flag, which in flagged.items()]
    return invalid, flags
