"""Run on an H200 from the wheels of cd46c6f: python scripts/probes/tf32_routes.py OUT (writes fp32-probe-7-routes.json).

The fp32 candidate list (swapped and K-major-copy routes) and the copy's speed.
"""
import json, os, sys
import torch, triton, triton.testing
from gemmreg_plugins.triton_tuned import launchers, configs, transpose
from gemmreg_plugins.triton_tuned.configs import _tiled
out = sys.argv[1]
sms = torch.cuda.get_device_properties(0).multi_processor_count
fallback = _tiled(128, 256, 32, 3, 8)
rows = []
for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336), (1000, 1000, 1001)]:
    a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    t_ref = triton.testing.do_bench(lambda: torch.mm(a, b), warmup=50, rep=300)
    torch.backends.cuda.matmul.allow_tf32 = False
    exact = torch.mm(a, b)
    assert torch.equal(transpose.k_major(b), b)
    t_tr = triton.testing.do_bench(lambda: transpose.k_major(b), warmup=50, rep=300)
    print(f"{m}x{n}x{k} cublas_tf32 {t_ref:.4f} ms; k_major copy {t_tr:.4f} ms = {2*k*n*4/t_tr/1e9:.0f} GB/s", flush=True)
    rows.append(dict(shape=[m, n, k], cublas=t_ref, copy_ms=t_tr))
    for cfg in configs.CUDA_PERSISTENT_TMA_TF32:
        try:
            launch = launchers.launcher(cfg, m, n, k, "tf32", sms, fallback=fallback)
            c = torch.empty(m, n, device="cuda")
            bad, worst = 0, 0.0
            for _ in range(10):
                c.fill_(float("nan")); launch(a, b, c)
                e = ((c - exact).abs().max() / exact.abs().max()).item()
                worst = max(worst, e if e == e else float("inf")); bad += not (e < 5e-3)
            ms = triton.testing.do_bench(lambda: launch(a, b, c), warmup=30, rep=200)
            print(f"  {cfg.name}: {t_ref/ms:.3f}x bad {bad}/10 worst {worst:.1e}", flush=True)
            rows.append(dict(shape=[m, n, k], name=cfg.name, ms=ms, ratio=t_ref / ms, bad=bad, worst=worst))
        except Exception as ex:
            print(f"  {cfg.name}: FAILED {type(ex).__name__}: {str(ex)[:160]}", flush=True)
json.dump(rows, open(os.path.join(out, "fp32-probe-7-routes.json"), "w"), indent=1)
