"""Split-K configs shaped like stream.py's best TMA dot (one program per SM,
full-M tile, deep TMA pipeline) through the plugin's own launch, timed by
tune.py's Bench (gemmreg's flush, interleaved with torch.mm)."""
import json, sys
sys.path.insert(0, "examples/gemmreg-splitk/scripts")
import tune
from gemmreg_splitk import heuristics

args = tune.parse_args(["--trials", "5", "--reps", "50"])
res = []
for (m, n, k) in [(64, 4096, 16384), (32, 8192, 8192)]:
    bench = tune.Bench(m, n, k, "fp16", args)
    cands = []
    for bn, bk, stages in [(64, 128, 5), (64, 128, 4), (128, 64, 5), (128, 128, 3), (64, 64, 6), (128, 64, 6)]:
        tiles = -(-m // m) * (n // bn)
        for fill in (1.0, 2.0):
            split = max(1, round(fill * 132 / tiles))
            split = 1 << (split.bit_length() - 1)
            for swap in (True, False):
                for warps in (4,):
                    for atomic in (True, False):
                        cfg = heuristics._finish(m, bn, bk, split, k, 2, num_warps=warps, num_stages=stages, swap_ab=swap, tma=True, reduce="serial")
                        cands.append((cfg, atomic))
    cands.append((heuristics.choose(m, n, k, tune.tune_grid.target(bench.where), atomic=True), True))
    cands.append((heuristics.choose(m, n, k, tune.tune_grid.target(bench.where), atomic=False), False))
    for cfg, atomic in cands:
        launch, why = bench.check(cfg, atomic)
        if launch is None:
            print("rejected", cfg, why, flush=True); continue
        ms, tms = bench.time(launch)
        row = {"shape": [m, n, k], "atomic": atomic, "key": tune.tune_grid.key(cfg, atomic), "us": round(ms * 1e3, 2), "torch_us": round(tms * 1e3, 2), "ratio": round(tms / ms, 4)}
        res.append(row); print(row, flush=True)
    json.dump(res, open(sys.argv[1], "w"), indent=0)
for r in sorted(res, key=lambda r: (r["shape"], r["atomic"], -r["ratio"])):
    print(r)
