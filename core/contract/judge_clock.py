"""The judge's clock, lent to a plugin's own tuner: :func:`sample_ms`.

A plugin that tunes (times candidate configs inside ``prepare``) should rank
them by what gemmreg will time, or it tunes for another measurement. The
usual tool, ``triton.testing.do_bench``, records a pair of events around
each call as the host launches it, so where a call is short the host's
launch path is in the figure: a Triton launch takes tens of microseconds on
the host, as long as a whole decode GEMM (Llama 3 8B's projections at 1 to
16 tokens run for 10-40 us on an H200), and a ranking by it favours the
cheapest launch rather than the fastest kernel. gemmreg's end-to-end
samples leave the launch path out (each batch is queued in full behind a
held stream, L2 flushed clean before each sample), so this function hands
the plugin that same clock.

It is the clock only: no rounds, no processes, no verdict. A tuner that
compares several candidates should still interleave them (each round times
every candidate once, in the order :func:`gemmreg.williams_rows` gives),
so that a clock that moves while it tunes moves them all alike, and keep
:func:`clock_note` beside its figures: a clock whose holds gave up led its
batches by a spin, where a long launch path shows in the figures.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from gemmreg.contract import backend

if TYPE_CHECKING:
    from gemmreg.timing.clocks import CpuClock, GpuClock


@functools.cache
def _clock() -> GpuClock | CpuClock:
    """One clock per process (on a GPU it holds a flush buffer of four times
    the L2 and a stream-hold kernel: made once, reused by every tuning)."""
    from gemmreg.timing.clocks import CpuClock, GpuClock

    return GpuClock() if backend.current().is_gpu else CpuClock()


def sample_ms(call: Callable[[], None], count: int) -> list[float]:
    """``count`` samples of ``call``, in milliseconds, taken as gemmreg's
    end-to-end regime takes them: on a GPU one pair of CUDA events around
    each call on the current stream, L2 flushed clean before each pair
    (outside it), every sample of a batch queued before the GPU runs any
    (so the host's launch path is not in the figure); on the CPU the host's
    time around each (synchronous) call. ``call`` enqueues one call with its
    operands bound, as a kernel's launch does; its first call (a compile)
    belongs outside, before the samples."""
    if count < 1:
        raise ValueError(f"sample_ms needs at least one sample, got {count}")
    return list(_clock().samples(call, count))


def clock_note() -> str:
    """How :func:`sample_ms`'s clock has queued its batches in this process so
    far: '' while every batch was held until queued and none had to be taken
    again (and on the CPU, or before the first sample); else how many batches
    were taken again after their hold gave up, and, where the holds kept
    giving up, why every later batch is led by a spin
    (:mod:`gemmreg.instruments.stream_hold`)."""
    if _clock.cache_info().currsize == 0:
        return ""
    clock = _clock()
    retakes = clock.retakes
    batches = "batch" if len(retakes) == 1 else "batches"
    parts = (
        [f"{len(retakes)} {batches} taken again after their hold gave up ({retakes[-1]})"]
        if retakes
        else []
    )
    if clock.queued:
        parts.append(clock.queued)
    return "; ".join(parts)
