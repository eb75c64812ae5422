"""Session 10 probe: the shipped tiny and small entries of whichever
gemmreg-splitk is on the path, against torch.mm as tune.py times (L2 flushed,
interleaved); run alternately with the old and new packages (ab.sh)."""
import json, sys
sys.path.insert(0, "examples/gemmreg-splitk/scripts")
import tune
from gemmreg_splitk import heuristics, plugin

args = tune.parse_args(["--trials", "9", "--reps", "50"])
out = []
for m, n, k in [(16, 16, 65536), (128, 128, 32768)]:
    for dtype in ("fp16", "bf16"):
        bench = tune.Bench(m, n, k, dtype, args)
        for atomic in (False, True):
            cfg = heuristics.choose(m, n, k, plugin.target(bench.where), atomic=atomic)
            launch, why = bench.check(cfg, atomic)
            assert launch is not None, why
            ms, tms = bench.time(launch)
            row = {"tag": sys.argv[2], "shape": [m, n, k], "dtype": dtype, "atomic": atomic,
                   "key": tune.tune_grid.key(cfg, atomic), "us": round(ms * 1e3, 3),
                   "torch_us": round(tms * 1e3, 3), "ratio": round(tms / ms, 4)}
            out.append(row); print(row, flush=True)
with open(sys.argv[1], "a") as f:
    for row in out:
        f.write(json.dumps(row) + "\n")
