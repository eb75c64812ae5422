"""Session-8 probe: 16-bit triton_tuned candidates (+ new ones) against cuBLAS, do_bench medians."""
import json, os, sys
import torch, triton, triton.testing
from gemmreg_plugins.triton_tuned import kernels, configs
from gemmreg_plugins.triton_tuned.configs import _tma, _tiled
out = sys.argv[1]
sms = torch.cuda.get_device_properties(0).multi_processor_count
shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336)]
cands = list(configs.CUDA_PERSISTENT_TMA) + [
    _tma(128, 256, 64, 4, 8, split=4),
    _tma(128, 256, 64, 4, 8, split=4, persistent=False),
    _tma(256, 128, 64, 4, 8, split=4),
    _tma(128, 256, 64, 4, 8, flatten=True, ws=True, split=4),
]
fallback = _tiled(128, 256, 64, 3, 8)
rows = []
for dt in (torch.float16, torch.bfloat16):
    for (m, n, k) in shapes:
        a = torch.randn(m, k, device="cuda", dtype=dt); b = torch.randn(k, n, device="cuda", dtype=dt)
        t_ref = triton.testing.do_bench(lambda: torch.mm(a, b), warmup=50, rep=300)
        exact = torch.mm(a, b).float()
        print(f"{dt} {m}x{n}x{k} cublas {t_ref:.4f} ms", flush=True)
        rows.append(dict(dtype=str(dt), shape=[m, n, k], name="cublas", ms=t_ref))
        for cfg in cands:
            try:
                launch = kernels.launcher(cfg, m, n, k, "tf32", sms, fallback=fallback)
                c = torch.empty(m, n, device="cuda", dtype=dt)
                launch(a, b, c); torch.cuda.synchronize()
                err = ((c.float() - exact).abs().max() / exact.abs().max()).item()
                ms = triton.testing.do_bench(lambda: launch(a, b, c), warmup=50, rep=300)
                print(f"  {cfg.name}: {ms:.4f} ms {t_ref/ms:.3f}x relerr {err:.1e}", flush=True)
                rows.append(dict(dtype=str(dt), shape=[m, n, k], name=cfg.name, ms=ms, ratio=t_ref/ms, relerr=err))
            except Exception as e:
                print(f"  {cfg.name}: FAILED {type(e).__name__}: {str(e)[:160]}", flush=True)
                rows.append(dict(dtype=str(dt), shape=[m, n, k], name=cfg.name, error=str(e)[:300]))
json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(os.path.join(out, "half-probe.json"), "w"), indent=1)
