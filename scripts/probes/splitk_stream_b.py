"""Run on an H200: python scripts/probes/splitk_stream_b.py OUT.json (as at 23c706c).

Streaming ceiling of Triton on the H200 for split-K's flat shapes: read B
(K x N fp16, row-major, 128 MiB) once, each program a [K slice x BN strip],
pointer loads pipelined by num_stages or TMA boxes, the strip summed (no MMA),
L2 flushed (zero_) before each sample as gemmreg does. Also the same with
tl.dot against A's column block, to see what the MMA costs.
"""
import json, statistics, sys
import torch, triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

@triton.jit
def stream_ptr(b_ptr, out_ptr, K, N, KPS: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = N // BN
    s = pid // grid_n
    j = pid % grid_n
    rk = tl.arange(0, BK)
    rn = j * BN + tl.arange(0, BN)
    acc = tl.zeros((BK, BN), tl.float32)
    base = b_ptr + (s * KPS).to(tl.int64) * N
    for kk in tl.range(0, KPS, BK):
        acc += tl.load(base + (kk + rk)[:, None].to(tl.int64) * N + rn[None, :]).to(tl.float32)
    tl.store(out_ptr + pid * BN + tl.arange(0, BN), tl.sum(acc, 0))

@triton.jit
def stream_tma(b_desc, out_ptr, K, N, KPS: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = N // BN
    s = pid // grid_n
    j = pid % grid_n
    acc = tl.zeros((BK, BN), tl.float32)
    for kk in tl.range(0, KPS, BK):
        acc += b_desc.load([s * KPS + kk, j * BN]).to(tl.float32)
    tl.store(out_ptr + pid * BN + tl.arange(0, BN), tl.sum(acc, 0))

@triton.jit
def dot_tma(a_desc, b_desc, out_ptr, K, N, KPS: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr, BM: tl.constexpr):
    # C^T strip = B^T[BN, K slice] @ A^T[K slice, M]: B^T via a transposed box
    pid = tl.program_id(0)
    grid_n = N // BN
    s = pid // grid_n
    j = pid % grid_n
    acc = tl.zeros((BN, BM), tl.float32)
    for kk in tl.range(0, KPS, BK):
        bt = b_desc.load([s * KPS + kk, j * BN]).T
        at = a_desc.load([0, s * KPS + kk]).T
        acc = tl.dot(bt, at, acc)
    tl.store(out_ptr + pid * BN * BM + tl.arange(0, BN)[:, None] * BM + tl.arange(0, BM)[None, :], acc)

l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.empty(4 * l2, dtype=torch.int8, device="cuda")
def timeit(fn, n=40):
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for s, e in pairs:
        flush.zero_(); s.record(); fn(); e.record()
    torch.cuda.synchronize()
    return statistics.median([s.elapsed_time(e) for s, e in pairs])

res = []
for m, n, k in [(64, 4096, 16384), (32, 8192, 8192)]:
    a = torch.randn(m, k, device="cuda").half(); b = torch.randn(k, n, device="cuda").half()
    c = torch.empty(m, n, device="cuda", dtype=torch.half)
    t_mm = statistics.median([timeit(lambda: torch.mm(a, b, out=c)) for _ in range(3)])
    t_copy = statistics.median([timeit(lambda: b.clone()) for _ in range(3)])
    res.append({"shape": [m, n, k], "torch_mm_us": t_mm * 1e3, "clone_us": t_copy * 1e3})
    print(res[-1], flush=True)
    nbytes = k * n * 2
    for kind in ("ptr", "tma", "dot"):
        for bn in ((64, 128) if kind == "dot" else (128, 256)):
            for bk in (64, 128):
                for pps in (1, 2, 4):
                    progs_wanted = pps * 132
                    split = max(1, round(progs_wanted / (n // bn)))
                    split = 1 << (split.bit_length() - 1)
                    kps = k // split
                    if kps < 2 * bk: continue
                    for warps in (4,):
                        for stages in (3, 5):
                            if (bk * bn * 2 + (bk * m * 2 if kind == "dot" else 0)) * stages > 200 * 1024: continue
                            grid = ((n // bn) * split,)
                            out = torch.empty(grid[0] * bn * (m if kind == "dot" else 1), device="cuda")
                            try:
                                if kind == "ptr":
                                    f = lambda: stream_ptr[grid](b, out, k, n, KPS=kps, BK=bk, BN=bn, num_warps=warps, num_stages=stages)
                                elif kind == "tma":
                                    d = TensorDescriptor(b, [k, n], [n, 1], [bk, bn])
                                    f = lambda: stream_tma[grid](d, out, k, n, KPS=kps, BK=bk, BN=bn, num_warps=warps, num_stages=stages)
                                else:
                                    if bn < 64: continue
                                    d = TensorDescriptor(b, [k, n], [n, 1], [bk, bn])
                                    da = TensorDescriptor(a, [m, k], [k, 1], [m, bk])
                                    f = lambda: dot_tma[grid](da, d, out, k, n, KPS=kps, BK=bk, BN=bn, BM=m, num_warps=warps, num_stages=stages)
                                f(); torch.cuda.synchronize()
                                t = timeit(f)
                            except Exception as exc:
                                print("fail", kind, bn, bk, pps, warps, stages, str(exc).splitlines()[0][:120], flush=True)
                                continue
                            row = {"shape": [m, n, k], "kind": kind, "bn": bn, "bk": bk, "split": split, "programs": grid[0], "warps": warps, "stages": stages, "us": round(t * 1e3, 2), "tbs": round(nbytes / t / 1e9, 3)}
                            res.append(row)
    best = sorted([r for r in res if r.get("kind") and r["shape"] == [m, n, k]], key=lambda r: r["us"])
    for kind in ("ptr", "tma", "dot"):
        for r in [r for r in best if r["kind"] == kind][:4]:
            print(r, flush=True)
    json.dump(res, open(sys.argv[1], "w"), indent=0)
json.dump(res, open(sys.argv[1], "w"), indent=0)
