"""Run on a GPU machine with gemmreg installed: python scripts/probes/cupti_cost.py (prints torch-profiler.txt).

CUPTI (torch profiler, CUDA activity only) on vs off, with gemmreg's own clock
(stream held, L2 read-flushed), interleaved blocks: does recording move figures?
Ran on the H200 from the wheels of e64c30f (evidence/2026-12-03-h200-cupti-cost/).
"""
import time, statistics, math, torch
from torch.profiler import profile, ProfilerActivity
from gemmreg.timing.clocks import GpuClock

clock = GpuClock("clean") if True else None
dev = "cuda"
print("profiler flag before:", torch.autograd.profiler._is_profiler_enabled, torch._C._autograd._profiler_enabled())

def two_launch(a, b, c, ws):
    k = a.shape[1] // 2
    torch.mm(a[:, :k], b[:k], out=c)
    torch.mm(a[:, k:], b[k:], out=ws)
    c.add_(ws)

def med(fn, n=200):
    return statistics.median(clock.samples(fn, n))

for label, (m, k, n) in (("16x16x65536", (16, 65536, 16)), ("1x4096x4096", (1, 4096, 4096)),
                         ("64x4096x16384", (64, 16384, 4096)), ("4096^3", (4096, 4096, 4096))):
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    c = torch.empty(m, n, device=dev, dtype=torch.bfloat16); ws = torch.empty_like(c)
    fns = {"mm": lambda: torch.mm(a, b, out=c), "3launch": lambda: two_launch(a, b, c, ws)}
    for f in fns.values(): f()
    torch.cuda.synchronize()
    off = {k_: [] for k_ in fns}; on = {k_: [] for k_ in fns}
    setup = []
    for rep in range(4):
        for name, f in fns.items():
            off[name].append(med(f))
        t0 = time.perf_counter()
        prof = profile(activities=[ProfilerActivity.CUDA]); prof.__enter__()
        setup.append(time.perf_counter() - t0)
        if rep == 0:
            print("profiler flag during:", torch.autograd.profiler._is_profiler_enabled, torch._C._autograd._profiler_enabled())
        for name, f in fns.items():
            on[name].append(med(f))
        prof.__exit__(None, None, None)
    for name in fns:
        r = [x / y for x, y in zip(on[name], off[name])]
        print(f"{label:14s} {name:8s} off {statistics.median(off[name])*1e3:8.2f}us on {statistics.median(on[name])*1e3:8.2f}us "
              f"on/off per rep {' '.join(f'{x:.4f}' for x in r)}  setup s {' '.join(f'{s:.2f}' for s in setup)}", flush=True)
