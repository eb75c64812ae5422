"""Session 17's probe of the same name (written after its `c5/`, not run
there for lack of device time, nor in session 18), now printing each pass's
medians as the pass ends, so that a run cut short still says something.
Its question: is the 1-3% that new
operands moved a 38 us call in `c5` (trials in sequence) where the operands
sit, or drift over time? And do copies allocated back to back (as gemmreg's
placements are) differ less among themselves than copies far apart?

SETS operand sets allocated back to back up front ("adjacent"), then SETS
more, each behind a spacer of 1-8 GiB kept alive ("spaced"); every set stays
alive. PASSES passes, each timing every set of both kinds, for split-K and
cuBLAS, in a shuffled order, one batch of BATCH held samples each. Per kind
and kernel: the sets' medians and their spread; per pass: the median over
all sets (drift over time shows there, not in the sets' spread).

  python3 placement_interleave_probe.py OUT [SHAPE] [DTYPE]
"""

import json
import os
import random
import statistics
import sys

import gemmreg
import torch
from gemmreg.running.clocks import GpuClock
from gemmreg_splitk import plugin

out = sys.argv[1]
m, n, k = (int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "64x4096x16384").split("x"))
dtype = sys.argv[3] if len(sys.argv) > 3 else "bf16"
SETS, PASSES, BATCH = 8, 12, 10
rng = random.Random(17)
problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype)
td = gemmreg.torch_dtype(dtype)
launch = plugin.make_prepare(False)(problem)
clock = GpuClock("clean")
print("held clock:", clock.hold is not None, repr(clock.queued), flush=True)


def operands():
    a = torch.randn(m, k, device="cuda").to(td)
    b = torch.randn(k, n, device="cuda").to(td)
    return a, b, torch.empty(m, n, device="cuda", dtype=td)


sets = {"adjacent": [operands() for _ in range(SETS)], "spaced": []}
spacers = []
for _ in range(SETS):
    spacers.append(torch.empty(rng.randint(1, 8) << 30, dtype=torch.uint8, device="cuda"))
    sets["spaced"].append(operands())
kernels = {
    "splitk": lambda a, b, c: launch(a, b, c),
    "cublas": lambda a, b, c: torch.mm(a, b, out=c),
}
slots = [(kind, i, name) for kind in sets for i in range(SETS) for name in kernels]
for kind, i, name in slots:  # warm every set once
    kernels[name](*sets[kind][i])
torch.cuda.synchronize()
got = {slot: [] for slot in slots}
per_pass = {name: [] for name in kernels}
for _ in range(PASSES):
    order = slots[:]
    rng.shuffle(order)
    this_pass = {name: [] for name in kernels}
    for kind, i, name in order:
        a, b, c = sets[kind][i]
        value = statistics.median(clock.samples(lambda f=kernels[name], a=a, b=b, c=c: f(a, b, c), BATCH)) * 1e3
        got[(kind, i, name)].append(value)
        this_pass[name].append(value)
    for name, values in this_pass.items():
        per_pass[name].append(statistics.median(values))
    print(f"pass {len(per_pass['cublas'])}: " + ", ".join(
        f"{kind} {name} " + " ".join(f"{got[(kind, i, name)][-1]:.2f}" for i in range(SETS))
        for kind in sets for name in kernels), flush=True)
print(f"{m}x{n}x{k} {dtype}: medians per set (us) over {PASSES} interleaved passes", flush=True)
report = {"shape": f"{m}x{n}x{k}", "dtype": dtype, "sets": {}, "per_pass": per_pass}
for kind in sets:
    for name in kernels:
        meds = [statistics.median(got[(kind, i, name)]) for i in range(SETS)]
        report["sets"][f"{kind} {name}"] = meds
        print(f"  {kind:8s} {name}: " + " ".join(f"{x:.2f}" for x in meds)
              + f" (spread {max(meds) / min(meds) - 1:.1%})", flush=True)
for name, values in per_pass.items():
    print(f"  per pass {name}: " + " ".join(f"{x:.2f}" for x in values)
          + f" (drift {max(values) / min(values) - 1:.1%})", flush=True)
print("held clock after:", clock.hold is not None, repr(clock.queued), flush=True)
with open(os.path.join(out, f"placement_interleave_probe-{dtype}.json"), "w") as fh:
    json.dump(report, fh, indent=1)
