"""Device experiment (not committed): which memory-ordering variant of the
atomic split-K kernel gives right answers on the GPU, and what each costs."""
import importlib.util, pathlib, sys, tempfile
import torch, triton
import gemmreg
from gemmreg_splitk import kernel, plugin

SRC = pathlib.Path(kernel.__file__).read_text()
RED = 'tl.atomic_add(ws_ptr + at, acc, mask=mask, sem="relaxed")'
LOAD = 'total = tl.load(ws_ptr + at, mask=mask, other=0.0, cache_modifier=".cg")'
ZERO = 'tl.store(ws_ptr + at, tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32), mask=mask)'
XCHG = 'total = tl.atomic_xchg(ws_ptr + at, tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32), mask=mask, sem="relaxed")'
assert RED in SRC and LOAD in SRC and ZERO in SRC
VARIANTS = {
    "as-is": [],
    "red-release": [(RED, RED.replace('"relaxed"', '"release"'))],
    "xchg-read": [(LOAD, XCHG), (ZERO, "pass")],
    "red-release+xchg": [(RED, RED.replace('"relaxed"', '"release"')), (LOAD, XCHG), (ZERO, "pass")],
    "red-acq_rel": [(RED, RED.replace('"relaxed"', '"acq_rel"'))],
}
tmp = pathlib.Path(tempfile.mkdtemp())
for name, edits in VARIANTS.items():
    src = SRC
    for old, new in edits:
        src = src.replace(old, new)
    path = tmp / f"splitk_{name.replace('+', '_').replace('-', '_')}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    kernel.splitk_kernel = mod.splitk_kernel
    for shape in ((128, 128, 32768), (64, 4096, 16384), (32, 8192, 8192), (16, 16, 65536)):
        for dtype in ("fp16",):
            m, n, k = shape
            launch = plugin.make_prepare(atomic=True)(gemmreg.Problem(m=m, n=n, k=k, dtype=dtype))
            td = gemmreg.torch_dtype(dtype)
            bad_calls = bad_max = 0
            for trial in range(40):
                a = torch.randn(m, k, device="cuda", dtype=td); b = torch.randn(k, n, device="cuda", dtype=td)
                ref = a.float() @ b.float()
                c = torch.empty(m, n, device="cuda", dtype=td)
                launch(a, b, c); torch.cuda.synchronize()
                bad = ((c.float() - ref).abs() > 2e-3 * ref.abs() + 0.5).sum().item()
                bad_calls += bad > 0; bad_max = max(bad_max, bad)
            ms = triton.testing.do_bench(lambda: launch(a, b, c), warmup=50, rep=300)
            print(f"{name:18s} {m}x{n}x{k} {dtype}: calls with wrong elements {bad_calls}/40 (worst {bad_max}), {ms*1000:.2f} us/call", flush=True)
