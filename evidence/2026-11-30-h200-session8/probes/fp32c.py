"""Session-8 probe 4: the swapped TF32 kernel with A in two row blocks (s8probe/tf32k.py)."""
import json, os, sys
sys.path.insert(0, os.path.dirname(__file__))
import torch, triton, triton.testing
import tf32k
out = sys.argv[1]
sms = torch.cuda.get_device_properties(0).multi_processor_count
variants = [
    dict(bm=128, bn=256, bk=32, sub_m=1, stages=3, warps=8, parts=2),
    dict(bm=256, bn=128, bk=32, sub_m=1, stages=3, warps=8, parts=2),
    dict(bm=256, bn=128, bk=32, sub_m=2, stages=3, warps=8, parts=2),
    dict(bm=256, bn=128, bk=32, sub_m=2, stages=3, warps=8, parts=2, persistent=False),
    dict(bm=256, bn=128, bk=32, sub_m=2, stages=4, warps=8, parts=2),
    dict(bm=256, bn=128, bk=32, sub_m=2, stages=4, warps=8, parts=2, persistent=False),
    dict(bm=256, bn=128, bk=32, sub_m=2, stages=3, warps=8, parts=1),
    dict(bm=256, bn=128, bk=32, sub_m=2, stages=3, warps=8, parts=2, mask=False),
    dict(bm=256, bn=128, bk=32, sub_m=2, stages=3, warps=8, parts=2, group_m=16),
]
rows = []
for (m, n, k) in [(512, 256, 256), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336)]:
    a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    t_ref = triton.testing.do_bench(lambda: torch.mm(a, b), warmup=50, rep=300)
    torch.backends.cuda.matmul.allow_tf32 = False
    exact = torch.mm(a, b)
    print(f"{m}x{n}x{k} cublas_tf32 {t_ref:.4f} ms", flush=True)
    for v in variants:
        name = "-".join(f"{key}{val}" for key, val in v.items())
        try:
            c = torch.full((m, n), float("nan"), device="cuda")
            run = lambda: tf32k.launch(a, b, c, sms=sms, **v)
            run(); torch.cuda.synchronize()
            d = (c - exact).abs()
            err = (d.max() / exact.abs().max()).item()
            bad = (d > 1e-2 * exact.abs().max()) | c.isnan()
            where = ""
            if bad.any():
                idx = bad.nonzero()
                where = f"bad {idx.shape[0]}/{m*n} rows%256 {sorted(set((idx[:,0] % 256).tolist()))[:6]}.. cols%256 {sorted(set((idx[:,1] % 256).tolist()))[:6]}.. nrows%256 {len(set((idx[:,0] % 256).tolist()))} ncols%256 {len(set((idx[:,1] % 256).tolist()))}"
            ms = triton.testing.do_bench(run, warmup=30, rep=200)
            print(f"  {name}: {t_ref/ms:.3f}x {2*m*n*k/ms/1e9:.0f} TF/s relerr {err:.1e} {where}", flush=True)
            rows.append(dict(shape=[m, n, k], variant=v, ratio=t_ref / ms, relerr=err, where=where))
        except Exception as e:
            print(f"  {name}: FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
            rows.append(dict(shape=[m, n, k], variant=v, error=str(e)[:300]))
json.dump(rows, open(os.path.join(out, "fp32-probe-4.json"), "w"), indent=1)
