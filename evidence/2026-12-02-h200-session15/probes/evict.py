"""Session 15: does gemmreg's read flush (``GpuClock.flush_l2``) evict A, B
and C as the zeroing did? At shapes whose operands fit in L2 a warm call is
faster than a cold one, so: torch.mm's event time per sample with no flush,
with the old zeroing of a 4x L2 buffer, and with GpuClock's read flush, in
interleaved rounds of 20-sample batches; and the flushes' own times.

  python3 evict.py OUT
"""

import json
import os
import statistics
import sys

import torch
from gemmreg.running import clocks

out = sys.argv[1]
read = clocks.GpuClock(flush=True)
none = clocks.GpuClock(flush=False)
zero_buffer = torch.empty(4 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.int8, device="cuda")


def zeroed(call, count):
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)]
    clocks.gpu_spin(torch, clocks.BATCH_LEAD_CYCLES)
    for e0, e1 in pairs:
        zero_buffer.zero_()
        e0.record()
        call()
        e1.record()
    torch.cuda.synchronize()
    return [e0.elapsed_time(e1) for e0, e1 in pairs]


def flush_ms(work):
    times = []
    for _ in range(20):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        work()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1))
    return statistics.median(times)


report = {"flush_ms": {"read": flush_ms(read.flush_l2), "zero": flush_ms(zero_buffer.zero_)}}
for size in (256, 1024, 2048, 4096):
    a = torch.randn(size, size, device="cuda").half()
    b = torch.randn(size, size, device="cuda").half()
    c = torch.empty(size, size, device="cuda").half()
    call = lambda: torch.mm(a, b, out=c)  # noqa: E731
    modes = {"none": lambda n: none.samples(call, n), "zero": lambda n: zeroed(call, n), "read": lambda n: read.samples(call, n)}
    for mode in modes.values():
        mode(20)
    got = {name: [] for name in modes}
    for r in range(10):
        for name in (list(modes) if r % 2 else list(modes)[::-1]):
            got[name] += modes[name](20)
    report[f"{size}^3"] = {name: statistics.median(v) for name, v in got.items()}
    print(size, json.dumps(report[f"{size}^3"]), flush=True)
print(json.dumps(report["flush_ms"]))
json.dump(report, open(os.path.join(out, "evict.json"), "w"), indent=1)
