"""ncu probe (session 10): torch.mm (cuBLAS) and splitk (the reduce-scatter)
at 128x128x32768, fp16 and bf16; each called 3 times after a warm-up, so
with ``--cache-control none`` the later calls see a warm L2 as the
device-kernel profile does."""
import torch
import gemmreg
from gemmreg_splitk import heuristics, plugin

m, n, k = 128, 128, 32768
where = gemmreg.where()
target = plugin.target(where)
for dtype in (torch.float16, torch.bfloat16):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).to(dtype).cuda()
    b = torch.randn(k, n, generator=g).to(dtype).cuda()
    c = torch.empty(m, n, dtype=dtype, device="cuda")
    cfg = heuristics.choose(m, n, k, target, atomic=False)
    print(dtype, cfg, flush=True)
    launch = plugin.build_launch(m, n, k, cfg, False, where)
    fns = {"torch.mm": lambda: torch.mm(a, b, out=c), "det": lambda: launch(a, b, c)}
    for fn in fns.values():
        fn(); torch.cuda.synchronize()
    for name, fn in fns.items():
        torch.cuda.nvtx.range_push(f"{str(dtype)[6:]} {name}")
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
