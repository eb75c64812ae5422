"""Session-8 probe 9: host cost of one launch (CPU microseconds per call, no sync)
against its device time (CUDA graph replay), split-K at the tiny shapes, and torch.mm."""
import json, os, sys, time
import torch, triton, triton.testing
import gemmreg
from gemmreg_splitk import plugin
out = sys.argv[1]
rows = []
def host_us(fn, n=2000):
    for _ in range(50): fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n): fn()
    cpu = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    return cpu
for (m, n, k) in [(16, 16, 65536), (128, 128, 32768), (32, 8192, 8192)]:
    for dt in (torch.float16,):
        a = torch.randn(m, k, device="cuda", dtype=dt); b = torch.randn(k, n, device="cuda", dtype=dt)
        c = torch.empty(m, n, device="cuda", dtype=dt)
        problem = gemmreg.Problem(m=m, n=n, k=k, dtype="fp16")
        cands = {"torch.mm": (lambda: torch.mm(a, b, out=c))}
        for name, atomic in (("splitk", False), ("splitk_atomic", True)):
            launch = plugin.make_prepare(atomic)(problem)
            cands[name] = (lambda launch=launch: launch(a, b, c))
        for name, fn in cands.items():
            cpu = host_us(fn)
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                fn(); torch.cuda.synchronize()
                with torch.cuda.graph(g): fn()
            graph_ms = triton.testing.do_bench(lambda: g.replay(), warmup=50, rep=200)
            e2e_ms = triton.testing.do_bench(fn, warmup=50, rep=200)
            print(f"{m}x{n}x{k} {name}: host {cpu:.1f} us/call, graph {graph_ms*1e3:.1f} us, do_bench {e2e_ms*1e3:.1f} us", flush=True)
            rows.append(dict(shape=[m, n, k], name=name, host_us=cpu, graph_us=graph_ms * 1e3, do_bench_us=e2e_ms * 1e3))
json.dump(rows, open(os.path.join(out, "overhead-probe-9.json"), "w"), indent=1)
