"""The clocks a worker times kernels with.

On a GPU a sample is one pair of events on the launch stream around one call,
with L2 flushed (a buffer of ``L2_FLUSH_MULTIPLE`` x L2 read, or zeroed for
``--l2 dirty``) before each pair, outside it; the samples of one slot are
queued in batches, each queued in full before the GPU runs it (the stream is
held by :mod:`gemmreg.instruments.stream_hold`; where it cannot be, behind a
short spin, ``BATCH_LEAD_CYCLES``) and read after one synchronisation; the
host's time around each call is kept apart (``last_host_ms``). Events time
one stream only: whether a call's work stayed inside that interval is
checked apart (:mod:`gemmreg.timing.device_activity`). On the CPU (torch's CPU ops and Triton's interpreter, both synchronous)
``time.perf_counter`` brackets the call, with no flush.

Before every sample, outside its interval and before the flush, C is poisoned
(refilled with the sentinel NaN, :meth:`gemmreg.checking.guarded_output.GuardedOutput.poison`):
a call that skips its work (the same operands again, a timer sensed) leaves
the sentinel in C, and the postcheck reads the last sample's C. Cost: one
write of C per sample (on a GPU one more launch in the held batch, a few us
of host time and, at 8192^2 bf16, about 40 us of device time beside the
flush's 80), none of it timed; after it, the flush still leaves a clean, cold L2.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Literal

from gemmreg.instruments import stream_hold
from gemmreg.timing.timing_options import DEFAULT_L2, L2_STATES

if TYPE_CHECKING:
    import torch as torch_module
    from gemmreg.timing.call_recorder import Recorder

L2_FLUSH_MULTIPLE = 4
"""The flush buffer is this many times the device's L2, so nothing of A, B or C survives.

By default the flush *reads* the buffer, so the L2 it leaves holds clean
lines only. Zeroing it instead (as ``triton.testing.do_bench`` does, and gemmreg did until
December 2026) leaves an L2 full of dirty lines that the timed kernel must
write back first, and on the H200 what that cost was drawn per process. In
``evidence/2026-12-02-h200-l2-flush-write-back/`` (``t1``, ``t2``: two processes, 60
samples each, device kernel times from CUPTI) cuBLAS's kernel took, after a
read and after a zeroing, 1210 and 1210 us, 1228 and 1313 us at
8192x4096x14336, and 1250 and 1372 us, 1258 and 1262 us at 8192x14336x4096:
hit in one process of two at each shape. A persistent Triton kernel beside
it was hit in all four (1213 against 1338 us, 1225 against 1357, 1253
against 1337, 1263 against 1385). After a read the two kernels were within
0.4% of each other in every one. A penalty drawn once per process (the
verdict's unit) widened every interval at large shapes and made a verdict
depend on where the flush buffer lay; ``--l2 dirty`` keeps the zeroing for
whoever wants that start (:data:`gemmreg.timing.timing_options.L2_STATES`)."""
BATCH_LEAD_CYCLES = 500_000
"""Where the stream cannot be held (:mod:`gemmreg.instruments.stream_hold`), each
batch of samples is queued behind a GPU spin of this many cycles
(0.25-0.36 ms at 1.4-2 GHz), so that the host has queued the first call
before the GPU reaches it, as it has for every later sample of the batch.
Without it the first sample after a synchronisation started on an idle GPU:
its flush (about 80 us on the H200) was all that hid the host's launch path,
and a launch path longer than that landed inside the events of that sample
only. In a trace on an H200 (December 2026, two samples per batch) a persistent
Triton GEMM began 44 us after the flush ended in the first sample of a batch at
8192x14336x4096 and 2.4 us after it in the second, cuBLAS's 4.5 us after in
both; the first samples' events were 3.9% longer than the second ones', a
handicap of one kernel decided by batch position. Host time still shows
where it holds the stream up (a launch path longer than a sample's flush
and device work): the stream hold takes that out."""
DEFAULT_L2_BYTES = 64 * 2**20
"""Assumed L2 size where the device does not report one."""
GRAPH_TARGET_MS = 2.0
"""A captured graph holds enough calls to run about this long per replay, so
one replay's launch cost is small beside its work."""
GRAPH_MAX_CALLS = 200

Call = Callable[[], None]


def gpu_spin(torch: ModuleType, cycles: int) -> None:
    """Queue a one-thread kernel that spins ``cycles`` GPU clock cycles on the
    current stream. Private torch API (``torch.cuda._sleep``), kept behind
    this one function. ``torch``: the module (a stand-in in tests), as below."""
    torch.cuda._sleep(cycles)


class GpuClock:
    name = "cuda-events"

    def __init__(
        self,
        l2: str | None = DEFAULT_L2,
        torch: ModuleType | None = None,
        hold: stream_hold.StreamHold | Literal["make"] | None = "make",
    ):
        """:param l2: one of ``L2_STATES``, or None for no flush.
        :param torch: the torch module (a stand-in in tests).
        :param hold: a :class:`gemmreg.instruments.stream_hold.StreamHold`, None
            for the lead spin, or ``"make"`` to build one here (falling back
            to the spin, with the reason in :attr:`queued`)."""
        if l2 is not None and l2 not in L2_STATES:
            raise ValueError(f"unknown L2 state {l2!r}: expected one of {', '.join(L2_STATES)}")
        if torch is None:
            import torch as imported

            torch = imported
        self.torch = torch
        self.l2 = l2
        self.buffer: torch_module.Tensor | None = None
        self.sink: torch_module.Tensor | None = None
        if l2 is not None:
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            l2_bytes = getattr(props, "L2_cache_size", 0) or DEFAULT_L2_BYTES
            words = L2_FLUSH_MULTIPLE * l2_bytes // 8
            self.buffer = torch.zeros(words, dtype=torch.int64, device="cuda")
            self.sink = torch.zeros((), dtype=torch.int64, device="cuda")
        self.queued = ""
        """'' while every batch is held until queued; else why batches are led by a spin."""
        if hold == "make":
            hold, self.queued = stream_hold.make(torch)
        elif hold is None:
            self.queued = "no stream hold (none asked for)"
        self.hold = hold
        self.chunk = stream_hold.MAX_SAMPLES
        """Samples queued behind one hold: halved for good each time a hold gives up."""
        self.retakes: list[str] = []
        """Why each batch taken again was (:meth:`samples`): how long the host took
        to queue that batch's slowest chunk, against the hold's timeout of about
        0.14 s. A short one points away from the host (a full launch queue)."""
        self.marks: Recorder | None = None
        """While the timed calls' work is recorded, the recorder whose marker
        kernels bracket every call (:mod:`gemmreg.timing.work_recording`)."""
        self.last_host_ms: float | None = None
        """The host's time per call in the last batch: the launch path, queued
        behind the hold (the GPU never pushes back), so the figure an
        end-to-end sample no longer contains."""

    def flush_l2(self) -> None:
        """Evict A, B and C: read the whole flush buffer (its sum into ``sink``),
        leaving clean lines, or zero it for ``dirty`` (``L2_STATES``)."""
        assert self.buffer is not None  # called only where there is a flush
        if self.l2 == "dirty":
            self.buffer.zero_()
        else:
            self.torch.sum(self.buffer, dim=0, out=self.sink)

    def samples(self, call: Call, count: int, before: Call | None = None) -> list[float]:
        """``count`` samples of ``call``; ``before`` (the poison of C) is queued
        before each one's flush, inside the held batch: per sample, not per batch.

        A batch whose hold gave up is taken again: the GPU ran some of it while
        the host was still queueing, so its samples may have timed the host. It
        is retaken in chunks half as long (a chunk the launch queue could not
        take whole fits then); after ``stream_hold.GIVE_UPS`` give-ups in a
        row the call must be waiting on the GPU itself, and the clock leads
        this batch and every later one with a spin, saying why."""
        give_ups = 0
        while True:
            values, (seconds, samples) = self._batch(call, count, before)
            hold = self.hold
            if hold is None or not hold.timed_out():
                return values
            give_ups += 1
            self.retakes.append(
                f"the host queued its slowest chunk ({samples} samples) in {seconds * 1e3:.1f} ms"
            )
            if give_ups >= stream_hold.GIVE_UPS:
                self.hold = None  # the host cannot queue a chunk while held: spin from now on
                self.queued = (
                    f"stream hold gave up {give_ups} times in a row (the host did not queue "
                    "a held batch in time: a call that waits on the GPU?); later batches led by a spin"
                )
            else:
                self.chunk = max(1, self.chunk // 2)
                hold.clear()

    @property
    def retaken(self) -> int:
        """Batches taken again because their hold gave up."""
        return len(self.retakes)

    def _batch(
        self, call: Call, count: int, before: Call | None
    ) -> tuple[list[float], tuple[float, int]]:
        """One batch of ``count`` samples, queued behind the hold (or the lead
        spin), read after one synchronisation; and its slowest chunk to queue
        (host seconds, samples)."""
        torch = self.torch
        stream = torch.cuda.current_stream()
        pairs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(count)
        ]
        hold = self.hold
        chunk = max(1, min(count, self.chunk)) if hold is not None else max(1, count)
        host = 0.0
        slowest = (0.0, 0)
        for first in range(0, count, chunk):
            queueing = time.perf_counter()
            if hold is not None:
                hold.hold()  # the GPU waits here until the chunk is queued
            else:
                gpu_spin(torch, BATCH_LEAD_CYCLES)  # the host gets ahead: BATCH_LEAD_CYCLES
            try:
                with stream_hold.collector_paused():
                    for start, end in pairs[first : first + chunk]:
                        if before is not None:
                            before()  # outside the events, and before the flush evicts what it wrote
                        if self.buffer is not None:
                            self.flush_l2()  # outside the events
                        if self.marks is not None:
                            self.marks.open()  # outside the events, after the flush
                        start.record(stream)
                        began = time.perf_counter()
                        call()
                        host += time.perf_counter() - began
                        end.record(stream)
                        if self.marks is not None:
                            self.marks.close(call)
            finally:  # a call that raises must not leave the GPU waiting on the hold
                if hold is not None:
                    hold.release()
            took = time.perf_counter() - queueing
            if took > slowest[0]:
                slowest = (took, len(pairs[first : first + chunk]))
        torch.cuda.synchronize()
        self.last_host_ms = host * 1e3 / max(1, count)
        return [start.elapsed_time(end) for start, end in pairs], slowest


class CpuClock:
    name = "perf_counter"
    last_host_ms: float | None = None
    """No separate host figure: on the CPU a sample is the host's own time."""
    queued = ""
    """Nothing is queued ahead on the CPU: its calls are synchronous."""
    retakes: tuple[str, ...] = ()
    """Nothing is held on the CPU, so nothing is taken again."""

    def samples(self, call: Call, count: int, before: Call | None = None) -> list[float]:
        """``count`` samples of ``call``, ``before`` (the poison of C) ahead of each, untimed."""
        out = []
        for _ in range(count):
            if before is not None:
                before()
            start = time.perf_counter()
            call()
            out.append((time.perf_counter() - start) * 1e3)
        return out


class Graph:
    """A CUDA graph of ``calls`` back-to-back calls: warm (no flush) and
    launch-free, so a launch-bound kernel's figure shows its device work."""

    def __init__(self, call: Call, calls: int):
        import torch

        self.torch = torch
        self.calls = calls
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            call()  # capture needs the first use of lazily created state done
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            for _ in range(calls):
                call()
        self.graph.replay()
        torch.cuda.synchronize()

    @staticmethod
    def calls_for(call_ms: float) -> int:
        if call_ms <= 0:
            return GRAPH_MAX_CALLS
        return max(1, min(GRAPH_MAX_CALLS, round(GRAPH_TARGET_MS / call_ms)))

    def per_call_ms(self, replays: int) -> float:
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(replays):
            self.graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / (replays * self.calls)
