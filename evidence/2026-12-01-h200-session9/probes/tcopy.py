"""The K-major copy of B (fp32, 4096^2 and 8192^2) by tile shape, warps and
load path (pointers, or TMA load + TMA store), timed as gemmreg does (L2
flushed by zero_ before each sample, median)."""
import json, statistics, sys
import torch, triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

@triton.jit
def tp(src, dst, rows, cols, stride_src, stride_dst, TR: tl.constexpr, TC: tl.constexpr):
    offs_r = (tl.program_id(0) * TR + tl.arange(0, TR)).to(tl.int64)
    offs_c = (tl.program_id(1) * TC + tl.arange(0, TC)).to(tl.int64)
    mask = (offs_r[:, None] < rows) & (offs_c[None, :] < cols)
    tile = tl.load(src + offs_r[:, None] * stride_src + offs_c[None, :], mask=mask)
    tl.store(dst + offs_c[:, None] * stride_dst + offs_r[None, :], tl.trans(tile), mask=tl.trans(mask))

@triton.jit
def tp_tma(sd, dd, TR: tl.constexpr, TC: tl.constexpr):
    r = tl.program_id(0) * TR
    c = tl.program_id(1) * TC
    dd.store([c, r], tl.trans(sd.load([r, c])))

@triton.jit
def tp_tma_loop(sd, dd, rows, cols, TR: tl.constexpr, TC: tl.constexpr, PER: tl.constexpr):
    # PER tiles per program along the columns, pipelined loads
    r = tl.program_id(0) * TR
    for i in tl.range(0, PER):
        c = (tl.program_id(1) * PER + i) * TC
        dd.store([c, r], tl.trans(sd.load([r, c])))

l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.empty(4 * l2, dtype=torch.int8, device="cuda")
def timeit(fn, n=60):
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for s, e in pairs:
        flush.zero_(); s.record(); fn(); e.record()
    torch.cuda.synchronize()
    return statistics.median([s.elapsed_time(e) for s, e in pairs])
res = []
for k, n in [(4096, 4096), (8192, 8192)]:
    b = torch.randn(k, n, device="cuda")
    copy = torch.empty((n, k), device="cuda")
    cands = []
    for tr, tc in [(64, 64), (32, 128), (128, 32), (64, 128), (128, 64), (128, 128), (32, 64), (64, 32)]:
        for w in (4, 8):
            grid = (k // tr, n // tc)
            cands.append((f"ptr {tr}x{tc} w{w}", lambda grid=grid, tr=tr, tc=tc, w=w: tp[grid](b, copy, k, n, n, k, TR=tr, TC=tc, num_warps=w)))
    for tr, tc in [(64, 64), (32, 128), (128, 32), (64, 128), (128, 64), (32, 32)]:
        for w in (4, 8):
            sd = TensorDescriptor(b, [k, n], [n, 1], [tr, tc])
            dd = TensorDescriptor(copy, [n, k], [k, 1], [tc, tr])
            grid = (k // tr, n // tc)
            cands.append((f"tma {tr}x{tc} w{w}", lambda grid=grid, sd=sd, dd=dd, tr=tr, tc=tc, w=w: tp_tma[grid](sd, dd, TR=tr, TC=tc, num_warps=w)))
            for per in (4, 16):
                g2 = (k // tr, n // tc // per)
                cands.append((f"tmaloop{per} {tr}x{tc} w{w}", lambda g2=g2, sd=sd, dd=dd, tr=tr, tc=tc, w=w, per=per: tp_tma_loop[g2](sd, dd, k, n, TR=tr, TC=tc, PER=per, num_warps=w, num_stages=3)))
    for name, f in cands:
        copy.zero_()
        try:
            f(); torch.cuda.synchronize()
            ok = torch.equal(copy.T, b)
            t = statistics.median([timeit(f) for _ in range(3)])
        except Exception as exc:
            print("fail", name, str(exc).splitlines()[0][:150], flush=True); continue
        row = {"k": k, "n": n, "name": name, "ok": ok, "us": round(t * 1e3, 2), "tbs": round(2 * k * n * 4 / t / 1e9, 3)}
        res.append(row); print(row, flush=True)
    json.dump(res, open(sys.argv[1], "w"), indent=0)
for r in sorted(res, key=lambda r: (r["k"], r["us"]))[:60]:
    print(r)
