"""Run on a GPU machine with gemmreg and cupti-python installed: python scripts/probes/cupti_direct.py (prints cupti-python.txt).

Direct CUPTI activity (cupti-python, CONCURRENT_KERNEL only): cost on gemmreg's
clock, toggled per block in ABBA order; what a kernel in the process can see.
Ran on the H200 from the wheels of e64c30f (evidence/2026-12-03-h200-cupti-cost/).
"""
import time, statistics, torch
from cupti import cupti
from gemmreg.timing.clocks import GpuClock

records = []
def requested():
    return 8 * 1024 * 1024, 0
def completed(activities):
    for a in activities:
        records.append((a.kind, getattr(a, "name", None), a.start, a.end))
cupti.activity_register_callbacks(requested, completed)
KIND = cupti.ActivityKind.CONCURRENT_KERNEL
clock = GpuClock("clean")
def on():
    cupti.activity_enable(KIND)
def off():
    cupti.activity_disable(KIND)
    cupti.activity_flush_all(1)

def three(a, b, c, ws):
    k = a.shape[1] // 2
    torch.mm(a[:, :k], b[:k], out=c); torch.mm(a[:, k:], b[k:], out=ws); c.add_(ws)

t0 = time.perf_counter(); on(); t_first = time.perf_counter() - t0; off()
print(f"first enable {t_first:.3f}s; torch profiler flag with CUPTI on:", end=" ")
on(); print(torch.autograd.profiler._is_profiler_enabled, torch._C._autograd._profiler_enabled()); off(); records.clear()
for label, (m, k, n) in (("16x16x65536", (16, 65536, 16)), ("1x4096x4096", (1, 4096, 4096)),
                         ("64x4096x16384", (64, 16384, 4096)), ("4096^3", (4096, 4096, 4096))):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16); ws = torch.empty_like(c)
    fns = {"mm": lambda: torch.mm(a, b, out=c), "3launch": lambda: three(a, b, c, ws)}
    for f in fns.values(): f()
    torch.cuda.synchronize()
    res = {name: {"on": [], "off": []} for name in fns}
    toggles = []
    for rep in range(8):
        for state in (("off", "on") if rep % 2 == 0 else ("on", "off")):
            t0 = time.perf_counter()
            (on if state == "on" else off)()
            toggles.append(time.perf_counter() - t0)
            for name, f in fns.items():
                res[name][state].append(statistics.median(clock.samples(f, 100)))
        off()
    n_rec = len(records); records.clear()
    for name in fns:
        r = [x / y for x, y in zip(res[name]["on"], res[name]["off"])]
        print(f"{label:14s} {name:8s} off {statistics.median(res[name]['off'])*1e3:8.2f}us on {statistics.median(res[name]['on'])*1e3:8.2f}us "
              f"on/off median {statistics.median(r):.4f} per rep {' '.join(f'{x:.3f}' for x in r)}", flush=True)
    print(f"   records {n_rec}, toggle s median {statistics.median(toggles)*1e3:.2f} ms max {max(toggles)*1e3:.1f} ms")
