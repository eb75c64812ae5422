"""Session 15: triton_tuned's end-to-end ratio to cuBLAS at the long shapes
holds within each gemmreg process (every round the same, to +-1%) but moves
from 1.00x to 1.09x between processes (session 14's ``s6``), while graph
replay agrees across processes. This runs one process of a gemmreg-like
measurement and prints its per-process ratios, for a shell loop to repeat in
fresh processes:

- each kernel its own operands, allocated in turn (as gemmreg does), plus
  ``flat@cublas``: the flat config on cuBLAS's very operands;
- heat soak (1 s round robin), then ROUNDS rounds, order rotated; a slot is
  3 batches of 2 samples (flush with zero_, start event, call, end event),
  one synchronisation per batch; the slot's median;
- per variant, the 20%-trimmed mean of the per-round log-ratios against
  cuBLAS, as speedup (above 1: faster than cuBLAS), with the flush zeroing
  (as gemmreg) and reading the buffer (clean lines left in L2).

  python3 processes.py M N K
"""

import math
import statistics
import sys
import time

import gemmreg
import torch
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import configs, launchers, tuner

m, n, k = map(int, sys.argv[1:4])
ROUNDS = 12
props = torch.cuda.get_device_properties(0)
flush = torch.empty(4 * props.L2_cache_size, dtype=torch.int8, device="cuda")
sink = torch.empty((), dtype=torch.int64, device="cuda")
problem = gemmreg.Problem(m=m, n=n, k=k, dtype="fp16")
triton_tuned.prepare(problem)
choice, precision, _ = triton_tuned.choose(problem, gemmreg.where())
cands = configs.candidates("cuda", "fp16", m, n, k, True)
by_name = {c.name.split(":", 1)[1]: c for c in cands}
fallback = tuner.fallback_of(cands, {})
names = {"flat": "128x256x64-s3-w8-g8-flat", "sk": "128x256x64-s3-w8-g16-flat-sk",
         "pertile": "128x256x64-s3-w8-g8-pertile", "ws-split": "128x256x64-s3-w8-g8-flat-ws-split"}


def operands(seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(m, k, device="cuda", generator=g).half(),
            torch.randn(k, n, device="cuda", generator=g).half(),
            torch.empty(m, n, device="cuda", dtype=torch.half))


calls = {}
ops = {"cublas": operands(0)}
a, b, c = ops["cublas"]
calls["cublas"] = lambda: torch.mm(a, b, out=c)
for label, name in names.items():
    launch = launchers.launcher(by_name[name], m, n, k, precision, props.multi_processor_count, fallback=fallback)
    ops[label] = operands(0)
    calls[label] = (lambda la, o: lambda: la(*o))(launch, ops[label])
    if label == "flat":
        calls["flat@cublas"] = (lambda la: lambda: la(a, b, c))(launch)


def batch(call, kind):
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(2)]
    for e0, e1 in pairs:
        if kind == "zero":
            flush.zero_()
        else:
            torch.sum(flush, dim=0, dtype=torch.int64, out=sink)
        e0.record()
        call()
        e1.record()
    torch.cuda.synchronize()
    return [e0.elapsed_time(e1) for e0, e1 in pairs]


def trimmed(xs, cut=0.2):
    xs = sorted(xs)
    drop = int(len(xs) * cut)
    return statistics.mean(xs[drop: len(xs) - drop] or xs)


start = time.perf_counter()
while time.perf_counter() - start < 1.0:
    for call in calls.values():
        batch(call, "zero")
line = [f"{m}x{n}x{k}", f"chosen={choice.best.name.split(':', 1)[1]}"]
for kind, labels in (("zero", list(calls)), ("read", ["cublas", "flat", "flat@cublas"])):
    logs = {label: [] for label in labels if label != "cublas"}
    for r in range(ROUNDS):
        order = labels[r % len(labels):] + labels[: r % len(labels)]
        if r % 2:
            order.reverse()
        slot = {label: statistics.median(batch(calls[label], kind) + batch(calls[label], kind) + batch(calls[label], kind)) for label in order}
        for label in logs:
            logs[label].append(math.log(slot["cublas"] / slot[label]))
    line += [f"{kind}:{label}={math.exp(trimmed(v)):.4f}" for label, v in logs.items()]
print(" ".join(line), flush=True)
