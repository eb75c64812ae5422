"""Where does split-K's end-to-end time go? gemmreg's clock (L2 flushed by
zero_ before each sample, events around the call) against variants: the GPU
kept busy ahead of the host (host launch cost hidden for sure), and a
read-only flush (L2 left clean, no dirty write-backs). Plus a CUPTI trace
of the dirty-flush loop: per-kernel device time."""
import json, os, statistics, sys
import torch
import gemmreg
from gemmreg_splitk import heuristics, plugin

out = sys.argv[1]
where = gemmreg.where()
target = plugin.target(where)
l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.empty(4 * l2, dtype=torch.int8, device="cuda")
flush_f = flush.view(torch.float32)
NEW = {
    (128, 128, 32768): heuristics._finish(32, 64, 128, 16, 32768, 2, num_warps=4, num_stages=5, reduce="tree", fanin=4, swap_ab=True),
    (16, 16, 65536): heuristics._finish(16, 16, 128, 64, 65536, 2, num_warps=2, num_stages=5, reduce="tree", fanin=8),
}
def med(x): return statistics.median(x)
def sample(fn, mode, n):
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for s, e in pairs:
        if mode == "clean":
            flush_f.sum()
        else:
            flush.zero_()
        if mode == "sleep":
            torch.cuda._sleep(300000)
        s.record(); fn(); e.record()
    torch.cuda.synchronize()
    return med([s.elapsed_time(e) * 1e3 for s, e in pairs])
res = []
for m, n, k in [(128, 128, 32768), (16, 16, 65536), (64, 4096, 16384), (32, 8192, 8192)]:
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).half().cuda(); b = torch.randn(k, n, generator=g).half().cuda()
    c = torch.empty(m, n, dtype=torch.half, device="cuda")
    fns = {"torch.mm": lambda: torch.mm(a, b, out=c)}
    for atomic in (True, False):
        cfg = heuristics.choose(m, n, k, target, atomic=atomic)
        L = plugin.build_launch(m, n, k, cfg, atomic, where)
        fns["atomic" if atomic else "det"] = lambda L=L: L(a, b, c)
    if (m, n, k) in NEW:
        cfg = NEW[(m, n, k)]
        L = plugin.build_launch(m, n, k, cfg, False, where)
        fns["det_new"] = lambda L=L: L(a, b, c)
    ref = a.float() @ b.float()
    for name, fn in fns.items():
        c.fill_(float("nan")); fn(); torch.cuda.synchronize()
        err = float((c.float() - ref).abs().max())
        print(m, n, k, name, "max err", err, flush=True)
    table = {name: {mode: [] for mode in ("dirty", "sleep", "clean")} for name in fns}
    for trial in range(4):
        for name, fn in (list(fns.items()) if trial % 2 == 0 else list(fns.items())[::-1]):
            for mode in ("dirty", "sleep", "clean"):
                table[name][mode].append(sample(fn, mode, 60))
    for name in fns:
        row = {"shape": [m, n, k], "fn": name, **{mode: round(med(v), 2) for mode, v in table[name].items()}}
        res.append(row); print(row, flush=True)
    # CUPTI per-kernel device time in the dirty loop
    from torch.profiler import profile, ProfilerActivity
    for name, fn in fns.items():
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            sample(fn, "dirty", 30)
        durs = {}
        for ev in prof.events():
            if ev.device_type == torch.autograd.DeviceType.CUDA:
                durs.setdefault(ev.name[:60], []).append(ev.device_time)
        row = {"shape": [m, n, k], "fn": name, "cupti_us": {kname: round(med(v), 2) for kname, v in durs.items()}, "count": {kname: len(v) for kname, v in durs.items()}}
        res.append(row); print(row, flush=True)
        prof.export_chrome_trace(os.path.join(out, f"trace-{m}x{n}x{k}-{name}.json"))
json.dump(res, open(os.path.join(out, "e2e.json"), "w"), indent=1)
