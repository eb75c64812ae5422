"""Session 10 probe: reduce-scatter configs at 128x128x32768 around the
shipped 64x64x128 split 32 w4 s4 (deeper pipelines, other tiles), timed
against torch.mm as tune.py times, L2 flushed (cold, as gemmreg's end-to-end
samples) and back-to-back with L2 warm (as the device-kernel profile runs)."""
import json, sys
sys.path.insert(0, "examples/gemmreg-splitk/scripts")
import tune
from gemmreg_splitk import heuristics

res = []
m, n, k = 128, 128, 32768
CFGS = [  # bm, bn, bk, split, warps, stages
    (64, 64, 128, 32, 4, 4), (64, 64, 128, 32, 4, 5), (64, 64, 128, 32, 8, 5), (64, 64, 128, 32, 4, 6),
    (64, 64, 64, 32, 4, 6), (64, 64, 64, 32, 4, 8), (64, 64, 256, 32, 4, 3),
    (128, 64, 128, 64, 4, 4), (128, 64, 128, 64, 8, 4), (64, 128, 128, 64, 4, 4), (64, 128, 128, 64, 8, 4),
    (128, 64, 64, 64, 8, 6), (32, 64, 128, 16, 4, 6), (64, 32, 128, 16, 4, 6),
]
for warm in (False, True):
    args = tune.parse_args(["--trials", "7", "--reps", "50"] + (["--warm"] if warm else []))
    for dtype in ("fp16", "bf16"):
        bench = tune.Bench(m, n, k, dtype, args)
        for bm, bn, bk, split, w, s in CFGS:
            cfg = heuristics._finish(bm, bn, bk, split, k, 2, num_warps=w, num_stages=s, reduce="scatter")
            row = {"warm": warm, "dtype": dtype, "key": tune.tune_grid.key(cfg, False)}
            launch, why = bench.check(cfg, False)
            if launch is None:
                row["rejected"] = why
            else:
                ms, tms = bench.time(launch)
                row.update(us=round(ms * 1e3, 3), torch_us=round(tms * 1e3, 3), ratio=round(tms / ms, 4))
            res.append(row); print(row, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=0)
