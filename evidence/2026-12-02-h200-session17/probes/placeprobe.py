"""Session 17: why were session 16's held A/A intervals at microsecond shapes
wider (r3: per-process twin ratios 0.985-1.021 where each process knew its own
to +-0.5%)? r3's rounds show a discrete ~0.3 us penalty on some of one twin's
placements (6.62 against 6.91 us at 512^3 bf16). Is that the placement (where
the operands sit), or the stream hold?

torch.mm on PLACEMENTS fresh placements of A, B and C (C guarded as gemmreg
allocates it), timed by gemmreg's own GpuClock held and led by a spin,
interleaved: REPS passes, each over every placement in a shuffled order and
both clocks (order alternating), one batch of BATCH samples each. Per
placement: the median of its batch medians under each clock, and where its
operands sit (offset in a 2 MiB page, pages spanned).

  python3 placeprobe.py OUT
"""

import json
import os
import random
import statistics
import sys

import gemmreg
import torch
from gemmreg.judging.output_check import GuardedOutput
from gemmreg.running.clocks import GpuClock

out = sys.argv[1]
PLACEMENTS, REPS, BATCH = 16, 12, 10
PAGE = 2 << 20
torch.backends.cuda.matmul.allow_tf32 = False
held = GpuClock("clean")
spin = GpuClock("clean", hold=None)
print("held clock:", held.hold is not None, repr(held.queued), flush=True)
report = {"queued": held.queued}
rng = random.Random(17)


def where(t):
    start = t.data_ptr()
    end = start + t.numel() * t.element_size()
    return {"offset_kib": (start % PAGE) // 1024, "pages": (end - 1) // PAGE - start // PAGE + 1}


for m, n, k, dtype in [(512, 512, 512, "bf16"), (512, 512, 512, "fp32"), (16, 16, 65536, "bf16")]:
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype)
    td = gemmreg.torch_dtype(dtype)
    gen = torch.Generator(device="cuda").manual_seed(1)
    a0 = torch.randn(m, k, device="cuda", generator=gen).to(td)
    b0 = torch.randn(k, n, device="cuda", generator=gen).to(td)
    sets = []
    for _ in range(PLACEMENTS):
        a, b = a0.clone(), b0.clone()
        guarded = GuardedOutput.allocate(problem, "cuda")
        sets.append((a, b, guarded))
    calls = [(lambda a=a, b=b, g=g: torch.mm(a, b, out=g.out)) for a, b, g in sets]
    for f in calls:
        for _ in range(5):
            f()
    torch.cuda.synchronize()
    got = {"held": [[] for _ in calls], "spin": [[] for _ in calls]}
    for rep in range(REPS):
        order = list(range(PLACEMENTS))
        rng.shuffle(order)
        clocks = (("held", held), ("spin", spin))[:: 1 if rep % 2 else -1]
        for p in order:
            for cname, clock in clocks:
                got[cname][p].append(statistics.median(clock.samples(calls[p], BATCH)) * 1e3)
    key = f"{m}x{n}x{k} {dtype}"
    rows = []
    for p, (a, b, g) in enumerate(sets):
        rows.append({
            "placement": p,
            "held_us": statistics.median(got["held"][p]),
            "spin_us": statistics.median(got["spin"][p]),
            "a": where(a), "b": where(b), "c": where(g.out),
        })
    report[key] = {"rows": rows, "raw": got}
    print(key, flush=True)
    for r in rows:
        print(f"  p{r['placement']:2d} held {r['held_us']:7.3f} spin {r['spin_us']:7.3f}  "
              f"a@{r['a']['offset_kib']:5d}K/{r['a']['pages']} b@{r['b']['offset_kib']:5d}K/{r['b']['pages']} "
              f"c@{r['c']['offset_kib']:5d}K/{r['c']['pages']}", flush=True)
    for cname in ("held", "spin"):
        meds = [r[f"{cname}_us"] for r in rows]
        print(f"  {cname}: placements' medians {min(meds):.3f}-{max(meds):.3f} us, spread "
              f"{max(meds) / min(meds) - 1:.2%}", flush=True)
    h = [r["held_us"] for r in rows]
    s = [r["spin_us"] for r in rows]
    print(f"  held minus spin per placement: median {statistics.median(x - y for x, y in zip(h, s, strict=True)):+.3f} us; "
          f"rank correlation of slow placements held vs spin: "
          f"{sum(1 for x, y in zip(h, s, strict=True) if (x > statistics.median(h)) == (y > statistics.median(s)))}/{len(h)} agree",
          flush=True)
print("held clock after:", held.hold is not None, repr(held.queued), flush=True)
with open(os.path.join(out, "placeprobe.json"), "w") as fh:
    json.dump(report, fh, indent=1)
