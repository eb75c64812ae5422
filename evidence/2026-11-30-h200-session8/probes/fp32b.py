"""Session-8 probe 3: is the 256x128 swapped miscompile in the epilogue? and K=64 stages."""
import json, os, sys
import torch, triton, triton.testing
from gemmreg_plugins.triton_tuned import kernels
from gemmreg_plugins.triton_tuned.configs import _tma, _tiled
out = sys.argv[1]
sms = torch.cuda.get_device_properties(0).multi_processor_count
fallback = _tiled(128, 256, 32, 3, 8)
cands = [_tma(256, 128, 32, 2, 8), _tma(256, 128, 32, 3, 8, split=2), _tma(256, 128, 32, 3, 8, split=2, persistent=False),
         _tma(128, 256, 64, 2, 8, split=4), _tma(128, 256, 32, 3, 8, split=2)]
rows = []
for (m, n, k) in [(4096, 4096, 4096), (8192, 4096, 14336), (512, 256, 256)]:
    a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    t_ref = triton.testing.do_bench(lambda: torch.mm(a, b), warmup=50, rep=300)
    torch.backends.cuda.matmul.allow_tf32 = False
    exact = torch.mm(a, b)
    for cfg in cands:
        try:
            launch = kernels.launcher(cfg, m, n, k, "tf32", sms, fallback=fallback)
            c = torch.full((m, n), float("nan"), device="cuda")
            launch(a, b, c); torch.cuda.synchronize()
            d = (c - exact).abs()
            err = (d.max() / exact.abs().max()).item()
            bad = (d > 1e-2 * exact.abs().max()).nonzero()
            where = "" if bad.numel() == 0 else f"bad {bad.shape[0]} first {bad[0].tolist()} rows {bad[:,0].unique().numel()} cols {bad[:,1].unique().numel()} col%256 {sorted(set((bad[:,1] % 256).tolist()))[:8]} row%256 {sorted(set((bad[:,0] % 256).tolist()))[:8]}"
            ms = triton.testing.do_bench(lambda: launch(a, b, c), warmup=20, rep=100)
            print(f"{m}x{n}x{k} {cfg.name}: {t_ref/ms:.3f}x relerr {err:.1e} {where}", flush=True)
            rows.append(dict(shape=[m, n, k], name=cfg.name, ratio=t_ref/ms, relerr=err, where=where))
        except Exception as e:
            print(f"{m}x{n}x{k} {cfg.name}: FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
json.dump(rows, open(os.path.join(out, "fp32-probe-3.json"), "w"), indent=1)
