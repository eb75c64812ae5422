"""Run on an H200 from the wheels of 281e7ec: python scripts/probes/tf32_races.py OUT (writes fp32-probe-5-races.json).

Sporadic wrong results of the swapped TF32 kernels? (30 calls per variant;
the kernel is tf32k.py, beside it.)
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(__file__))
import torch, triton, triton.testing
import tf32k
from gemmreg_plugins.triton_tuned import kernels, configs
from gemmreg_plugins.triton_tuned.configs import _tiled
out = sys.argv[1]
REPS = 30
sms = torch.cuda.get_device_properties(0).multi_processor_count
fallback = _tiled(128, 256, 32, 3, 8)
probe_variants = []
for barrier in (False, True):
    probe_variants += [
        dict(bm=128, bn=256, bk=32, sub_m=1, stages=3, warps=8, parts=2, barrier=barrier),
        dict(bm=256, bn=128, bk=32, sub_m=1, stages=3, warps=8, parts=2, barrier=barrier),
        dict(bm=256, bn=128, bk=32, sub_m=2, stages=3, warps=8, parts=2, barrier=barrier),
        dict(bm=256, bn=128, bk=32, sub_m=2, stages=4, warps=8, parts=2, persistent=False, barrier=barrier),
    ]
rows = []
for (m, n, k) in [(4096, 4096, 4096), (8192, 14336, 4096)]:
    a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    t_ref = triton.testing.do_bench(lambda: torch.mm(a, b), warmup=50, rep=200)
    torch.backends.cuda.matmul.allow_tf32 = False
    exact = torch.mm(a, b)
    scale = exact.abs().max()
    runs = [("plugin:" + c.name, kernels.launcher(c, m, n, k, "tf32", sms, fallback=fallback)) for c in configs.CUDA_PERSISTENT_TMA_TF32]
    runs += [("probe:" + "-".join(f"{x}{y}" for x, y in v.items()), (lambda a_, b_, c_, v=v: tf32k.launch(a_, b_, c_, sms=sms, **v))) for v in probe_variants]
    for name, fn in runs:
        c = torch.empty(m, n, device="cuda")
        bad_calls, worst = 0, 0.0
        try:
            for _ in range(REPS):
                c.fill_(float("nan"))
                fn(a, b, c)
                e = ((c - exact).abs().max() / scale).item()
                worst = max(worst, e if e == e else float("inf"))
                bad_calls += not (e < 5e-3)
            ms = triton.testing.do_bench(lambda: fn(a, b, c), warmup=30, rep=200)
            print(f"{m}x{n}x{k} {name}: bad {bad_calls}/{REPS} worst {worst:.1e} {t_ref/ms:.3f}x", flush=True)
            rows.append(dict(shape=[m, n, k], name=name, bad=bad_calls, reps=REPS, worst=worst, ratio=t_ref / ms))
        except Exception as ex:
            print(f"{m}x{n}x{k} {name}: FAILED {type(ex).__name__}: {str(ex)[:200]}", flush=True)
json.dump(rows, open(os.path.join(out, "fp32-probe-5-races.json"), "w"), indent=1)
