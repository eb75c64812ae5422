"""Session-11 probe: how fast can 128 MB of B be read, by 128 vs 132 (or more) programs? (split-K flat32)"""
import json, os, sys
import torch, triton, triton.language as tl, triton.testing

out = sys.argv[1]
sms = torch.cuda.get_device_properties(0).multi_processor_count


@triton.jit
def stream_flat(x, out, total, n_per, BLOCK: tl.constexpr, STAGES: tl.constexpr):
    pid = tl.program_id(0)
    base = pid.to(tl.int64) * n_per
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.range(0, n_per, BLOCK, num_stages=STAGES):
        offs = base + i + tl.arange(0, BLOCK)
        acc += tl.load(x + offs, mask=offs < total, other=0.0).to(tl.float32)
    tl.store(out + pid, tl.sum(acc))


@triton.jit
def stream_cols(x, out, rows, cols, BR: tl.constexpr, BC: tl.constexpr, STAGES: tl.constexpr):
    """Like the split-K kernel's B reads: program p reads all rows of columns [p*BC, (p+1)*BC)."""
    pid = tl.program_id(0)
    offs_c = pid * BC + tl.arange(0, BC)
    acc = tl.zeros([BR, BC], tl.float32)
    for r in tl.range(0, rows, BR, num_stages=STAGES):
        offs_r = (r + tl.arange(0, BR)).to(tl.int64)
        acc += tl.load(x + offs_r[:, None] * cols + offs_c[None, :]).to(tl.float32)
    tl.store(out + pid, tl.sum(acc))


b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
a = torch.randn(32, 8192, device="cuda", dtype=torch.float16)
total = b.numel()
res = torch.empty(4096, device="cuda")
rows = []


def bench(name, fn):
    fn()
    ms = triton.testing.do_bench(fn, warmup=25, rep=300)
    tbs = total * 2 / ms / 1e9
    print(f"{name}: {ms*1000:.2f} us {tbs:.3f} TB/s", flush=True)
    rows.append(dict(name=name, ms=ms, tbs=tbs))


for rep in range(2):
    bench(f"r{rep} torch.mm 32x8192x8192", lambda: torch.mm(a, b))
    bench(f"r{rep} torch.sum", lambda: b.sum())
    for progs in (128, 132, 264, 396, 528, 1056):
        for block, stages in ((8192, 2), (8192, 3), (4096, 4), (16384, 2)):
            n_per = triton.cdiv(triton.cdiv(total, progs), block) * block
            bench(f"r{rep} flat progs={progs} block={block} stages={stages}",
                  lambda: stream_flat[(progs,)](b, res, total, n_per, BLOCK=block, STAGES=stages, num_warps=8))
    for bc, br, stages, w in ((64, 128, 4, 4), (64, 128, 5, 4), (64, 256, 3, 8), (32, 256, 4, 4), (128, 64, 5, 4)):
        bench(f"r{rep} cols progs={8192//bc} BR={br} BC={bc} stages={stages} w={w}",
              lambda: stream_cols[(8192 // bc,)](b, res, 8192, 8192, BR=br, BC=bc, STAGES=stages, num_warps=w))
json.dump(rows, open(os.path.join(out, "stream.json"), "w"), indent=1)
