"""Session 10 probe: would two programs per SM help the reduce-scatter at
128x128x32768? The plugin spins only with at most one program per SM; here
the launch is built for an Environment claiming twice the SMs, so grids of
up to 264 programs spin, launched cooperatively (the driver refuses a grid
that cannot be resident at once: such a config is reported, never hangs).
Timed as tune.py times (L2 flushed, interleaved with torch.mm)."""
import json, sys
import attrs
sys.path.insert(0, "examples/gemmreg-splitk/scripts")
import tune
from gemmreg_splitk import heuristics

args = tune.parse_args(["--trials", "7", "--reps", "50"])
m, n, k = 128, 128, 32768
CFGS = [  # bm, bn, bk, split, warps, stages
    (64, 64, 128, 32, 4, 5),   # shipped: 128 programs
    (64, 64, 128, 64, 4, 3), (64, 64, 64, 64, 4, 4), (64, 64, 64, 64, 4, 6),
    (64, 32, 128, 32, 4, 4), (64, 32, 64, 32, 4, 6), (32, 64, 128, 32, 4, 4),
    (128, 64, 64, 128, 4, 3), (64, 64, 128, 64, 8, 3),
]
res = []
for dtype in ("fp16", "bf16"):
    bench = tune.Bench(m, n, k, dtype, args)
    bench.where = attrs.evolve(bench.where, multiprocessors=2 * bench.where.multiprocessors)
    for bm, bn, bk, split, w, s in CFGS:
        cfg = heuristics._finish(bm, bn, bk, split, k, 2, num_warps=w, num_stages=s, reduce="scatter")
        row = {"dtype": dtype, "key": tune.tune_grid.key(cfg, False), "programs": cfg.tiles(m, n) * split}
        launch, why = bench.check(cfg, False)
        if launch is None:
            row["rejected"] = why
        else:
            ms, tms = bench.time(launch)
            row.update(us=round(ms * 1e3, 3), torch_us=round(tms * 1e3, 3), ratio=round(tms / ms, 4))
        res.append(row); print(row, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=0)
