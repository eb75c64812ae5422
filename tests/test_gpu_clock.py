"""GpuClock's sample protocol, on a stand-in torch that records what is
queued: a batch is held (or, without a hold, led by a spin), then per sample
a flush that reads the buffer (``clean``, the default: never writes it) or
zeroes it (``dirty``), the start event, the call, the end event; then the
hold is released and one synchronisation reads the batch."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from gemmreg.timing import clocks

L2 = 1 << 20


class FakeTorch:
    int64 = "int64"

    def __init__(self) -> None:
        self.log: list[tuple] = []
        self.tensors: list[SimpleNamespace] = []
        log = self.log

        class Event:
            count = 0

            def __init__(self, enable_timing: bool = False) -> None:
                Event.count += 1
                self.id = Event.count

            def record(self, stream=None) -> None:
                log.append(("record", self.id))

            def elapsed_time(self, end) -> float:
                return float(end.id - self.id)

        self.cuda = SimpleNamespace(
            get_device_properties=lambda index: SimpleNamespace(L2_cache_size=L2),
            current_device=lambda: 0,
            current_stream=lambda: "stream",
            Event=Event,
            synchronize=lambda: log.append(("synchronize",)),
            _sleep=lambda cycles: log.append(("spin", cycles)),
        )

    def zeros(self, *shape, dtype=None, device=None):
        tensor = SimpleNamespace(shape=shape, dtype=dtype, device=device)
        self.tensors.append(tensor)
        self.log.append(("zeros", shape, dtype))
        return tensor

    def sum(self, tensor, dim=None, out=None) -> None:
        self.log.append(("read", tensor is self.tensors[0], out is self.tensors[1]))


def test_a_batch_is_a_lead_spin_then_read_flush_events_and_call_per_sample() -> None:
    torch = FakeTorch()
    clock = clocks.GpuClock(l2="clean", torch=torch, hold=None)
    assert torch.tensors[0].shape == (clocks.L2_FLUSH_MULTIPLE * L2 // 8,)
    torch.log.clear()
    calls = []
    values = clock.samples(lambda: (calls.append(1), torch.log.append(("call",))), 3)
    assert len(calls) == 3 and values == [1.0, 1.0, 1.0]
    sample = [("read", True, True), ("record",), ("call",), ("record",)]
    shape = [entry[:1] if entry[0] == "record" else entry for entry in torch.log]
    assert shape == [("spin", clocks.BATCH_LEAD_CYCLES), *sample * 3, ("synchronize",)]
    assert not any(entry[0] == "zeros" for entry in torch.log)  # nothing written per sample


def test_without_flush_a_batch_still_starts_behind_the_spin() -> None:
    torch = FakeTorch()
    clock = clocks.GpuClock(l2=None, torch=torch, hold=None)
    values = clock.samples(lambda: torch.log.append(("call",)), 2)
    assert values == [1.0, 1.0]
    kinds = [entry[0] for entry in torch.log]
    assert kinds == ["spin", "record", "call", "record", "record", "call", "record", "synchronize"]


def test_dirty_zeroes_the_buffer_and_an_unknown_state_is_refused() -> None:
    torch = FakeTorch()
    zeroed = []
    clock = clocks.GpuClock(l2="dirty", torch=torch, hold=None)
    clock.buffer.zero_ = lambda: zeroed.append(1)
    torch.log.clear()
    clock.samples(lambda: None, 2)
    assert len(zeroed) == 2 and not any(entry[0] == "read" for entry in torch.log)
    with pytest.raises(ValueError, match="unknown L2 state 'warm'"):
        clocks.GpuClock(l2="warm", torch=FakeTorch(), hold=None)
