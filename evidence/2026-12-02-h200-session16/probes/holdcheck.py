"""Session 16: does the stream hold (gemmreg.running.stream_hold) take the
host out of split-K's samples? gemmreg's own GpuClock, held and led by a spin
(as before), interleaved batch by batch on the calls ``skmodes`` found
queue-bound, and on cuBLAS; per clock: the batches' median, 90th percentile
and max of their medians, and the batches over 1.3x the best.

  python3 holdcheck.py OUT
"""

import json
import os
import statistics
import sys

import gemmreg
import torch
from gemmreg.running.clocks import GpuClock
from gemmreg_splitk import plugin

out = sys.argv[1]
BATCHES, BATCH = 40, 25
held = GpuClock("clean")
print("held clock:", held.hold is not None, repr(held.queued), flush=True)
spin = GpuClock("clean", hold=None)
report = {"queued": held.queued}
for m, n, k in [(128, 128, 32768), (64, 4096, 16384), (16, 16, 65536)]:
    for dtype in ("fp16", "bf16"):
        problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype)
        td = gemmreg.torch_dtype(dtype)
        a = torch.randn(m, k, device="cuda").to(td)
        b = torch.randn(k, n, device="cuda").to(td)
        c = torch.empty(m, n, device="cuda", dtype=td)
        launch = plugin.make_prepare(False)(problem)
        calls = {"splitk": lambda: launch(a, b, c), "cublas": lambda: torch.mm(a, b, out=c)}
        for f in calls.values():
            for _ in range(20):
                f()
        torch.cuda.synchronize()
        got = {}
        for i in range(BATCHES):
            for cname, clock in (("held", held), ("spin", spin))[:: 1 if i % 2 else -1]:
                for kname, f in calls.items():
                    got.setdefault(f"{kname} {cname}", []).append(
                        statistics.median(clock.samples(f, BATCH))
                    )
        key = f"{m}x{n}x{k} {dtype}"
        report[key] = got
        parts = []
        for label, meds in got.items():
            s = sorted(x * 1e3 for x in meds)
            slow = sum(1 for x in s if x > 1.3 * s[0])
            parts.append(
                f"{label} med {statistics.median(s):.2f} p90 {s[int(0.9 * len(s))]:.2f} "
                f"max {s[-1]:.2f} slow {slow}/{len(s)}"
            )
        print(key + ": " + " | ".join(parts), flush=True)
print("held clock after:", held.hold is not None, repr(held.queued), flush=True)
json.dump(report, open(os.path.join(out, "holdcheck.json"), "w"), indent=1)
