"""The clocks a worker times kernels with.

On a GPU a sample is one pair of events on the launch stream around one call,
with L2 flushed (a buffer of ``L2_FLUSH_MULTIPLE`` x L2) before each pair,
outside it; the samples of one slot are queued together and read after one
synchronisation. Events time one stream only: whether a call's work stayed
inside that interval is checked apart (:mod:`gemmreg.running.device_activity`). On
the CPU (torch's CPU ops and Triton's interpreter, both synchronous)
``time.perf_counter`` brackets the call, with no flush.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

L2_FLUSH_MULTIPLE = 4
"""The flush buffer is this many times the device's L2, so nothing of A, B or C survives."""
DEFAULT_L2_BYTES = 64 * 2**20
"""Assumed L2 size where the device does not report one."""
GRAPH_TARGET_MS = 2.0
"""A captured graph holds enough calls to run about this long per replay, so
one replay's launch cost is small beside its work."""
GRAPH_MAX_CALLS = 200

Call = Callable[[], None]


class GpuClock:
    name = "cuda-events"

    def __init__(self, flush: bool):
        import torch

        self.torch = torch
        self.buffer: Any = None
        if flush:
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            l2_bytes = getattr(props, "L2_cache_size", 0) or DEFAULT_L2_BYTES
            self.buffer = torch.empty(L2_FLUSH_MULTIPLE * l2_bytes, dtype=torch.int8, device="cuda")

    def samples(self, call: Call, count: int) -> list[float]:
        torch = self.torch
        stream = torch.cuda.current_stream()
        pairs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(count)
        ]
        for start, end in pairs:
            if self.buffer is not None:
                self.buffer.zero_()  # evicts A, B and C from L2; outside the events
            start.record(stream)
            call()
            end.record(stream)
        torch.cuda.synchronize()
        return [start.elapsed_time(end) for start, end in pairs]


class CpuClock:
    name = "perf_counter"

    def samples(self, call: Call, count: int) -> list[float]:
        out = []
        for _ in range(count):
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
