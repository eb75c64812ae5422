"""ncu probe: torch.mm (cuBLAS), splitk_atomic, splitk and a plain read of B
on the flat and small split-K shapes, fp16. Run under ncu; each call once
after a warm-up."""
import torch
import gemmreg
from gemmreg_splitk import heuristics, plugin

shapes = [(64, 4096, 16384), (32, 8192, 8192), (128, 128, 32768), (16, 16, 65536)]
where = gemmreg.where()
target = plugin.target(where)
for m, n, k in shapes:
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).half().cuda()
    b = torch.randn(k, n, generator=g).half().cuda()
    c = torch.empty(m, n, dtype=torch.half, device="cuda")
    fns = {"torch.mm": lambda: torch.mm(a, b, out=c), "read_b": lambda: b.sum(dtype=torch.float32)}
    for atomic in (True, False):
        cfg = heuristics.choose(m, n, k, target, atomic=atomic)
        print(m, n, k, "atomic" if atomic else "det", cfg, flush=True)
        launch = plugin.build_launch(m, n, k, cfg, atomic, where)
        fns["atomic" if atomic else "det"] = lambda L=launch: L(a, b, c)
    for name, fn in fns.items():
        fn(); torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"{m}x{n}x{k}")
    for name, fn in fns.items():
        torch.cuda.nvtx.range_push(name)
        fn()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
