"""Session-8 probe 6: TF32 with both operands K-major in shared memory (B given column-major,
no swap, no registers), and what transposing a row-major B first costs."""
import json, os, sys
import torch, triton, triton.testing
from gemmreg_plugins.triton_tuned import kernels
from gemmreg_plugins.triton_tuned.configs import _tma, _tiled
out = sys.argv[1]
sms = torch.cuda.get_device_properties(0).multi_processor_count
fallback = _tiled(128, 256, 32, 3, 8)
cands = [_tma(128, 256, 32, 3, 8, split=2), _tma(128, 256, 32, 3, 8, split=2, persistent=False),
         _tma(256, 128, 32, 3, 8, split=2), _tma(256, 128, 32, 3, 8, split=2, persistent=False),
         _tma(128, 256, 32, 3, 8, split=2, flatten=True), _tma(128, 256, 32, 3, 8, split=2, flatten=True, ws=True),
         _tma(128, 128, 32, 5, 8, split=2), _tma(128, 256, 32, 4, 8, split=4), _tma(128, 256, 64, 2, 8, split=4)]
rows = []
for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336)]:
    a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
    bt_buf = torch.empty(n, k, device="cuda")
    b_col = bt_buf.t()  # K x N, column-major
    b_col.copy_(b)
    torch.backends.cuda.matmul.allow_tf32 = True
    t_ref = triton.testing.do_bench(lambda: torch.mm(a, b), warmup=50, rep=300)
    torch.backends.cuda.matmul.allow_tf32 = False
    exact = torch.mm(a, b)
    t_tr = triton.testing.do_bench(lambda: bt_buf.copy_(b.t()), warmup=50, rep=300)
    print(f"{m}x{n}x{k} cublas_tf32 {t_ref:.4f} ms; transpose B {t_tr:.4f} ms ({2*k*n*4/t_tr/1e9:.0f} GB/s)", flush=True)
    rows.append(dict(shape=[m, n, k], cublas=t_ref, transpose=t_tr))
    for cfg in cands:
        try:
            launch = kernels.launcher(cfg, m, n, k, "tf32", sms, fallback=fallback)
            c = torch.full((m, n), float("nan"), device="cuda")
            bad = 0
            for _ in range(10):
                c.fill_(float("nan")); launch(a, b_col, c)
                e = ((c - exact).abs().max() / exact.abs().max()).item()
                bad += not (e < 5e-3)
            ms = triton.testing.do_bench(lambda: launch(a, b_col, c), warmup=30, rep=200)
            print(f"  {cfg.name}: gemm {t_ref/ms:.3f}x, with transpose {t_ref/(ms+t_tr):.3f}x, bad {bad}/10 relerr {e:.1e}", flush=True)
            rows.append(dict(shape=[m, n, k], name=cfg.name, gemm_ms=ms, ratio=t_ref / ms, ratio_with_transpose=t_ref / (ms + t_tr), bad=bad, relerr=e))
        except Exception as ex:
            print(f"  {cfg.name}: FAILED {type(ex).__name__}: {str(ex)[:160]}", flush=True)
json.dump(rows, open(os.path.join(out, "fp32-probe-6-kmajor.json"), "w"), indent=1)
