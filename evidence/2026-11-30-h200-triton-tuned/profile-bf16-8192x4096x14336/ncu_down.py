"""Profile target: triton_tuned's chosen kernel and cuBLAS at bf16 8192x4096x14336."""
import json, os, sys, torch
from gemmreg.registry import discover
from gemmreg.records import Problem
from gemmreg.inputs import normal_inputs
spec = discover().kernels["triton_tuned"].spec
p = Problem(m=8192, n=4096, k=14336, dtype="bf16")
launch = spec.prepare(p)
cache = os.path.join(os.environ["GEMMREG_CACHE_DIR"], "triton_tuned.json")
if os.path.exists(cache) and len(sys.argv) > 1:
    entries = json.load(open(cache))
    for key, e in entries.get("entries", entries).items():
        if isinstance(e, dict) and "best" in e:
            print("CHOICE", key, e["best"], flush=True)
            for name, ms in sorted(e.get("timings_ms", {}).items(), key=lambda x: x[1]):
                print(f"  {ms:.4f} ms {name}")
            print("  skipped:", e.get("skipped"))
a, b = normal_inputs(p, 0, torch.device("cuda"))
out = torch.empty(p.m, p.n, device="cuda", dtype=torch.bfloat16)
for _ in range(2):
    launch(a, b, out)
    torch.mm(a, b, out=out)
torch.cuda.synchronize()
print("done", flush=True)
