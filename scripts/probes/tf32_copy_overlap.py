"""Run on an H200 from the wheels of ab7d831: python scripts/probes/tf32_copy_overlap.py OUT TAG

Hide triton_tuned's K-major copy of B (TF32) behind the GEMM.

Chunked: the copy of B's column chunk j+1 runs on a side stream while the GEMM of
chunk j runs; the GEMM of chunk j waits on chunk j's copy only. Also prints the
kernels' registers and shared memory (can a copy CTA sit beside a GEMM CTA?).
"""
import json, os, sys
import torch, triton, triton.testing
from gemmreg_plugins.triton_tuned import launchers, configs, transpose
from gemmreg_plugins.triton_tuned.configs import _tiled

out, tag = sys.argv[1], sys.argv[2]
sms = torch.cuda.get_device_properties(0).multi_processor_count
fallback = _tiled(128, 256, 32, 3, 8)
tb = [c for c in configs.CUDA_PERSISTENT_TMA_TF32 if c.transpose_b]


def chunked(cfg, m, n, k, parts, prio):
    side = torch.cuda.Stream(priority=0)
    high = torch.cuda.Stream(priority=-1) if prio else None
    nc = n // parts
    launch = launchers.launcher(cfg, m, nc, k, "tf32", sms, fallback=fallback)
    kern = transpose.transpose_kernel()

    def run(a, b, c):
        copy = torch.empty((n, triton.cdiv(k, 4) * 4), dtype=b.dtype, device=b.device)
        main = torch.cuda.current_stream()
        start = torch.cuda.Event(); start.record(main)
        side.wait_event(start)
        evs = []
        with torch.cuda.stream(side):
            for j in range(parts):
                src = b[:, j * nc:(j + 1) * nc]
                dst = copy[j * nc:(j + 1) * nc]
                kern[(triton.cdiv(k, 64), triton.cdiv(nc, 64))](src, dst, k, nc, src.stride(0), dst.stride(0), TILE=64)
                e = torch.cuda.Event(); e.record(side); evs.append(e)
        g = high or main
        for j in range(parts):
            g.wait_event(evs[j])
            with torch.cuda.stream(g):
                launch(a, copy[j * nc:(j + 1) * nc, :k].T, c[:, j * nc:(j + 1) * nc])
        if high is not None:
            done = torch.cuda.Event(); done.record(high); main.wait_event(done)
    return run


rows = []
for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336)]:
    a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    exact = torch.mm(a, b)
    torch.backends.cuda.matmul.allow_tf32 = True
    c = torch.empty(m, n, device="cuda")
    cands = {"cublas": lambda a, b, c: torch.mm(a, b, out=c)}
    for cfg in tb:
        cands[cfg.name] = launchers.launcher(cfg, m, n, k, "tf32", sms, fallback=fallback)
    for cfg in tb[:2]:
        for parts in (2, 4, 8):
            for prio in (False, True):
                cands[f"{cfg.name}-chunks{parts}{'-prio' if prio else ''}"] = chunked(cfg, m, n, k, parts, prio)
    errs = {}
    for name, fn in cands.items():
        c.fill_(float("nan")); fn(a, b, c); torch.cuda.synchronize()
        errs[name] = ((c - exact).abs().max() / exact.abs().max()).item()
    for rep in range(3):
        for name, fn in cands.items():
            ms = triton.testing.do_bench(lambda: fn(a, b, c), warmup=10, rep=150)
            rows.append(dict(tag=tag, shape=[m, n, k], name=name, rep=rep, ms=ms, err=errs[name]))
    base = {r["name"]: [] for r in rows if r["shape"] == [m, n, k]}
    for r in rows:
        if r["shape"] == [m, n, k]:
            base[r["name"]].append(r["ms"])
    cb = sorted(base["cublas"])[1]
    for name, v in base.items():
        print(f"{tag} {m}x{n}x{k} {name}: median {sorted(v)[1]*1000:.1f} us = {cb/sorted(v)[1]:.4f}x cuBLAS  err {errs[name]:.1e}", flush=True)
k0 = launchers.persistent_tma_kernel() if hasattr(launchers, "persistent_tma_kernel") else None
try:
    from gemmreg_plugins.triton_tuned import kernels
    for key, ck in list(kernels.persistent_tma_kernel().device_caches[0][0].items())[:4]:
        print("gemm kernel regs", ck.n_regs, "spills", ck.n_spills, "shared", ck.metadata.shared, flush=True)
    for key, ck in list(transpose.transpose_kernel().device_caches[0][0].items())[:2]:
        print("copy kernel regs", ck.n_regs, "shared", ck.metadata.shared, "warps", ck.metadata.num_warps, flush=True)
except Exception as ex:
    print("resource report failed", type(ex).__name__, ex)
json.dump(rows, open(os.path.join(out, f"overlap-{tag}.json"), "w"), indent=1)
