"""Session-8 probe (not committed as a product): fp32/TF32 TMA kernel with and
without the C^T swap, against cuBLAS TF32, do_bench medians (L2 flushed)."""
import json, os, sys, time
import torch, triton, triton.testing
from gemmreg_plugins.triton_tuned import kernels, configs
from gemmreg_plugins.triton_tuned.configs import _tma, _tiled, for_dtype
import attrs

out = sys.argv[1]
torch.manual_seed(0)
sms = torch.cuda.get_device_properties(0).multi_processor_count
shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336)]
cands = [
    _tma(128, 256, 32, 3, 8, split=2),
    _tma(128, 256, 32, 3, 8, split=2, persistent=False),
    _tma(128, 256, 32, 4, 8, split=4),
    _tma(128, 256, 32, 4, 8, split=4, persistent=False),
    _tma(128, 256, 32, 3, 8, split=2, ws=True),
    _tma(128, 256, 32, 3, 8, split=2, group_m=4),
    _tma(128, 256, 32, 3, 8, split=2, group_m=16),
    _tma(256, 128, 32, 3, 8, split=2),
    _tma(256, 128, 32, 3, 8, split=2, persistent=False),
    _tma(256, 128, 32, 3, 8, split=4),
    _tma(128, 128, 32, 6, 8, split=2, persistent=False),
    _tma(128, 128, 32, 5, 8, split=2),
]
fallback = _tiled(128, 256, 32, 3, 8)
rows = []
orig_swap = kernels.tf32_swap
for (m, n, k) in shapes:
    a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    ref = torch.mm(a.double().cpu() if m*n*k < 0 else a, b)
    t_ref = triton.testing.do_bench(lambda: torch.mm(a, b), warmup=50, rep=300)
    torch.backends.cuda.matmul.allow_tf32 = False
    exact = torch.mm(a, b)
    flops = 2 * m * n * k
    print(f"{m}x{n}x{k} cublas_tf32 {t_ref:.4f} ms {flops/t_ref/1e9:.0f} TF/s", flush=True)
    rows.append(dict(shape=[m, n, k], name="cublas_tf32", ms=t_ref))
    for cfg in [fallback, *cands]:
        for swap in ((False,) if cfg.path == "tiled" else (True,)):
            kernels.tf32_swap = (lambda *args, _s=swap: _s)
            try:
                launch = kernels.launcher(cfg, m, n, k, "tf32", sms, fallback=fallback)
                c = torch.empty(m, n, device="cuda")
                launch(a, b, c); torch.cuda.synchronize()
                err = ((c - exact).abs().max() / exact.abs().max()).item()
                ms = triton.testing.do_bench(lambda: launch(a, b, c), warmup=50, rep=300)
                print(f"  {cfg.name} swap={swap}: {ms:.4f} ms  {t_ref/ms:.3f}x cublas  {flops/ms/1e9:.0f} TF/s relerr {err:.2e}", flush=True)
                rows.append(dict(shape=[m, n, k], name=cfg.name, swap=swap, ms=ms, ratio=t_ref/ms, relerr=err))
            except Exception as e:
                msg = f"{type(e).__name__}: {str(e)[:200]}"
                print(f"  {cfg.name} swap={swap}: FAILED {msg}", flush=True)
                rows.append(dict(shape=[m, n, k], name=cfg.name, swap=swap, error=msg))
    del a, b
kernels.tf32_swap = orig_swap
json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__, rows=rows), open(os.path.join(out, "fp32-probe.json"), "w"), indent=1)
