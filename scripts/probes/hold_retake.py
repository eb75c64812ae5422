"""Run on a GPU machine with gemmreg installed: python scripts/probes/hold_retake.py.

gemmreg's own clock (stream held, L2 read-flushed) on a 2048^3 fp16 torch.mm:
one batch whose host stalls once past the hold's timeout (it must be taken
again, still held, in shorter chunks), the batch after it, and a call that
waits on the GPU (the holds give up three times, then the clock leads every
batch with a spin). Ran on an H100 from the wheels of 2cac10f
(evidence/2026-12-06-h100-llm-2048-8192-and-hold-retakes/hold).
"""

import time

import torch
from gemmreg.timing import clocks

a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
b = torch.randn_like(a)
clock = clocks.GpuClock()
print("hold made:", clock.hold is not None, repr(clock.queued))
n = [0]


def stall_once() -> None:
    n[0] += 1
    if n[0] == 5:
        time.sleep(0.3)  # past the hold's timeout (about 0.14 s at 1.98 GHz)
    torch.mm(a, b)


s = time.perf_counter()
v = clock.samples(stall_once, 20)
print(
    f"stall once: retaken {clock.retaken} queued {clock.queued!r} chunk {clock.chunk} "
    f"hold kept {clock.hold is not None} calls {n[0]} median {sorted(v)[10] * 1e3:.1f} us "
    f"max {max(v) * 1e3:.1f} us wall {time.perf_counter() - s:.2f} s"
)
v = clock.samples(lambda: torch.mm(a, b), 20)
print(
    f"next batch: retaken {clock.retaken} median {sorted(v)[10] * 1e3:.1f} us max {max(v) * 1e3:.1f} us"
)
waiting = clocks.GpuClock()


def waits() -> None:
    torch.mm(a, b)
    torch.cuda.synchronize()


s = time.perf_counter()
v = waiting.samples(waits, 20)
print(
    f"waits on GPU: retaken {waiting.retaken} queued {waiting.queued!r} hold {waiting.hold} "
    f"wall {time.perf_counter() - s:.2f} s median {sorted(v)[10] * 1e3:.1f} us"
)
