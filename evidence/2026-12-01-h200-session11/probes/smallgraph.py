"""Session-11 probe: device-time-like (CUDA graph replay, L2 warm) figures of split-K
configs at 128x128x32768 bf16/fp16 against torch.mm: can any beat cuBLAS bf16's 7.36 us?"""
import json, sys
sys.path.insert(0, "examples/gemmreg-splitk/scripts")
import torch, triton.testing
import tune
from gemmreg_splitk import heuristics

m, n, k = 128, 128, 32768
CFGS = [  # bm, bn, bk, split, warps, stages
    (64, 64, 128, 32, 4, 5), (64, 64, 128, 32, 4, 4), (64, 64, 128, 32, 4, 6), (64, 64, 128, 32, 8, 5),
    (64, 64, 64, 32, 4, 8), (64, 64, 256, 32, 4, 3), (64, 64, 128, 16, 4, 5), (64, 64, 128, 64, 4, 4),
    (32, 64, 128, 16, 4, 6), (64, 32, 128, 16, 4, 6), (128, 64, 128, 64, 4, 4), (64, 128, 128, 64, 4, 4),
    (128, 128, 128, 128, 8, 3), (128, 128, 64, 128, 8, 4),
]
res = []
args = tune.parse_args(["--trials", "3", "--reps", "20"])
for dtype in ("bf16", "fp16"):
    bench = tune.Bench(m, n, k, dtype, args)
    launches = {"torch.mm": lambda: torch.mm(bench.a, bench.b, out=bench.c)}
    for bm, bn, bk, split, w, s in CFGS:
        cfg = heuristics._finish(bm, bn, bk, split, k, 2, num_warps=w, num_stages=s, reduce="scatter")
        key = tune.tune_grid.key(cfg, False)
        launch, why = bench.check(cfg, False)
        if launch is None:
            print(dtype, key, "rejected", why[:100], flush=True); continue
        launches[key] = (lambda l=launch: l(bench.a, bench.b, bench.c))
    for rep in range(3):
        for key, fn in launches.items():
            try:
                us = triton.testing.do_bench_cudagraph(fn, rep=40) * 1e3
            except Exception as ex:
                print(dtype, key, "graph failed", type(ex).__name__, str(ex)[:120], flush=True); continue
            res.append(dict(dtype=dtype, key=key, rep=rep, us=us)); print(dtype, rep, key, f"{us:.3f} us", flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=0)
