"""Written in session 17, not yet run: what differs between processes?

At 64x4096x16384 (split-K against cuBLAS, session 17 `spread.txt`) each
kernel's median moves 1.6-3.6% from one process to the next, independently
of the other kernel, while the four operand placements inside a process
agree. The placements are allocated one after another, so they may share
one region of physical memory; other processes get other regions. Or it is
memory a kernel allocates once for itself (split-K's partials, cuBLAS's
workspace), or the flush buffer.

In one process, with gemmreg's own held clock, each experiment renews one
thing TRIALS times and times splitk and torch.mm interleaved (BATCHES
batches of BATCH samples each, per trial):

  adjacent   fresh operands and C, allocated back to back (as gemmreg does)
  spaced     fresh operands and C behind a spacer of 1-8 GiB kept alive
  workspace  split-K's cached partials and counters made again (behind a spacer)
             and cuBLAS's workspaces cleared (torch._C._cuda_clearCublasWorkspaces)
  flush      a new clock, so a new flush buffer (behind a spacer)

Per experiment and kernel: the trials' medians and their spread. A spread
like the between-process one (about 3%) in one experiment names the cause.

  python3 process_spread_probe.py OUT [SHAPE] [DTYPE]
"""

import json
import os
import random
import statistics
import sys

import gemmreg
import torch
from gemmreg.running.clocks import GpuClock
from gemmreg_splitk import plugin, workspace

out = sys.argv[1]
m, n, k = (int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "64x4096x16384").split("x"))
dtype = sys.argv[3] if len(sys.argv) > 3 else "bf16"
TRIALS, BATCHES, BATCH = 6, 20, 10
rng = random.Random(17)
problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype)
td = gemmreg.torch_dtype(dtype)
launch = plugin.make_prepare(False)(problem)
spacers = []
kept = []
"""Every operand set stays alive, as gemmreg's placements do (a freed set's
memory would be handed to the next one)."""


def spacer():
    spacers.append(torch.empty(rng.randint(1, 8) << 30, dtype=torch.uint8, device="cuda"))


def operands():
    a = torch.randn(m, k, device="cuda").to(td)
    b = torch.randn(k, n, device="cuda").to(td)
    return a, b, torch.empty(m, n, device="cuda", dtype=td)


def timed(clock, ops):
    a, b, c = ops
    calls = {"splitk": lambda: launch(a, b, c), "cublas": lambda: torch.mm(a, b, out=c)}
    for f in calls.values():
        for _ in range(10):
            f()
    torch.cuda.synchronize()
    got = {name: [] for name in calls}
    for i in range(BATCHES):
        for name in list(calls)[:: 1 if i % 2 else -1]:
            got[name].append(statistics.median(clock.samples(calls[name], BATCH)) * 1e3)
    return {name: statistics.median(v) for name, v in got.items()}


clock = GpuClock("clean")
print("held clock:", clock.hold is not None, repr(clock.queued), flush=True)
report = {"shape": f"{m}x{n}x{k}", "dtype": dtype}
base_ops = operands()
for experiment in ("adjacent", "spaced", "workspace", "flush"):
    rows = []
    for _ in range(TRIALS):
        ops = base_ops
        use = clock
        if experiment == "adjacent":
            ops = operands()
        elif experiment == "spaced":
            spacer()
            ops = operands()
        elif experiment == "workspace":
            spacer()
            workspace._CACHE.clear()
            torch._C._cuda_clearCublasWorkspaces()
        else:
            spacer()
            use = GpuClock("clean", hold=clock.hold)
        kept.append(ops)
        rows.append(timed(use, ops))
    report[experiment] = rows
    parts = []
    for name in ("splitk", "cublas"):
        meds = [r[name] for r in rows]
        parts.append(
            f"{name} " + " ".join(f"{x:.2f}" for x in meds)
            + f" (spread {max(meds) / min(meds) - 1:.1%})"
        )
    print(f"{experiment:9s}: " + " | ".join(parts), flush=True)
    spacers.clear()
    kept.clear()
    torch.cuda.empty_cache()
with open(os.path.join(out, "process_spread_probe.json"), "w") as fh:
    json.dump(report, fh, indent=1)
