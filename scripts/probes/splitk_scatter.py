"""Run on an H200 from the repository root at 5fe650a: python scripts/probes/splitk_scatter.py OUT.json

The reduce-scatter on the H200. For each config:
correct (tune.Bench.check), bit-identical over 20 calls, the same bits when
it spins and when the last program sums every share (a no-spin launch: the
same config built for an Environment with no SM count), and timed against
torch.mm as tune.py times (L2 flushed, interleaved), spin and no-spin.
"""
import json, sys
import attrs
import torch
sys.path.insert(0, "examples/gemmreg-splitk/scripts")
import tune
from gemmreg_splitk import heuristics, plugin

args = tune.parse_args(["--trials", "5", "--reps", "50"])
res = []
CFGS = {
    (16, 16, 65536): [(16, 16, 128, 128, 2, 4, False), (16, 16, 128, 128, 2, 5, False), (16, 16, 128, 64, 2, 5, False)],
    (128, 128, 32768): [(32, 64, 128, 16, 4, 5, True), (64, 64, 128, 32, 4, 3, False), (128, 128, 128, 128, 8, 2, False), (64, 128, 128, 64, 4, 2, False)],
}
for (m, n, k), cfgs in CFGS.items():
    for dtype in ("fp16", "bf16"):
        bench = tune.Bench(m, n, k, dtype, args)
        nospin_where = attrs.evolve(bench.where, multiprocessors=None)
        for bm, bn, bk, split, w, s, swap in cfgs:
            cfg = heuristics._finish(bm, bn, bk, split, k, 2, num_warps=w, num_stages=s, swap_ab=swap, reduce="scatter")
            row = {"shape": [m, n, k], "dtype": dtype, "key": tune.tune_grid.key(cfg, False)}
            launch, why = bench.check(cfg, False)
            if launch is None:
                row["rejected"] = why; res.append(row); print(row, flush=True); continue
            outs = []
            for _ in range(20):
                bench.c.fill_(float("nan")); launch(bench.a, bench.b, bench.c); outs.append(bench.c.clone())
            row["identical_20"] = all(torch.equal(o, outs[0]) for o in outs)
            nospin = plugin.build_launch(m, n, k, cfg, False, nospin_where)
            bench.c.fill_(float("nan")); nospin(bench.a, bench.b, bench.c)
            row["nospin_same_bits"] = torch.equal(bench.c, outs[0])
            ms, tms = bench.time(launch)
            row.update(us=round(ms * 1e3, 2), torch_us=round(tms * 1e3, 2), ratio=round(tms / ms, 4))
            ms2, tms2 = bench.time(nospin)
            row.update(nospin_us=round(ms2 * 1e3, 2), nospin_ratio=round(tms2 / ms2, 4))
            res.append(row); print(row, flush=True)
        for atomic in (False, True):  # the shipped entries, for reference
            cfg = heuristics.choose(m, n, k, tune.tune_grid.target(bench.where), atomic=atomic)
            launch, why = bench.check(cfg, atomic)
            ms, tms = bench.time(launch)
            row = {"shape": [m, n, k], "dtype": dtype, "shipped": "atomic" if atomic else "det", "key": tune.tune_grid.key(cfg, atomic), "us": round(ms * 1e3, 2), "torch_us": round(tms * 1e3, 2), "ratio": round(tms / ms, 4)}
            res.append(row); print(row, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=0)
