"""Run on an H200 from the wheels of cd46c6f: python scripts/probes/tf32_copy_speed.py OUT (writes copy-probe-8.json).

The K-major copy's speed by tile and warps (and torch's copy).
"""
import json, os, sys
import torch, triton, triton.testing
from gemmreg_plugins.triton_tuned import transpose
out = sys.argv[1]
rows = []
kern = transpose.transpose_kernel()
for (k, n) in [(4096, 4096), (8192, 8192), (4096, 14336), (14336, 4096)]:
    b = torch.randn(k, n, device="cuda")
    for tile in (32, 64, 128):
        for warps in (2, 4, 8):
            copy = torch.empty((n, k), device="cuda")
            grid = (triton.cdiv(k, tile), triton.cdiv(n, tile))
            f = lambda: kern[grid](b, copy, k, n, b.stride(0), copy.stride(0), TILE=tile, num_warps=warps)
            f(); assert torch.equal(copy.T, b)
            ms = triton.testing.do_bench(f, warmup=30, rep=200)
            rows.append(dict(k=k, n=n, tile=tile, warps=warps, ms=ms, tbs=2 * k * n * 4 / ms / 1e9))
            print(f"{k}x{n} tile {tile} warps {warps}: {ms:.4f} ms {2*k*n*4/ms/1e9:.2f} TB/s", flush=True)
    copy = torch.empty((n, k), device="cuda")
    ms = triton.testing.do_bench(lambda: copy.copy_(b.T), warmup=30, rep=200)
    print(f"{k}x{n} torch copy_: {ms:.4f} ms {2*k*n*4/ms/1e9:.2f} TB/s", flush=True)
json.dump(rows, open(os.path.join(out, "copy-probe-8.json"), "w"), indent=1)
