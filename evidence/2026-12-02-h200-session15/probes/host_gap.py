"""Session 15: is triton_tuned's end-to-end gap at the long shapes its host
launch path, exposed at the start of each batch of samples? (Session 14's
``probes/host_gap.py``, which did not run there, with one more kernel:
``triton_tuned_lean``, the same launch with the TMA checks and the three
descriptors memoised per operand set, to see what a shorter host path buys.)

gemmreg's end-to-end samples are flush, start event, call, end event, queued
in batches and read after one synchronisation each. After a synchronisation
the GPU is idle: it runs the flush while the host prepares the call, and a
call whose host path takes longer than the flush starts late, inside the
events.

At 8192x14336x4096 and 8192x4096x14336 in fp16 this measures:
1. each kernel's host time per launch (GPU kept busy, so launches never wait),
   and the parts of triton_tuned's that are its own (TMA checks, descriptors);
2. event times in batches of 1, 2, 4 and 8 samples, each batch after a
   synchronisation: the first sample of a batch against the others;
3. the same with a ~200 us GPU sleep queued before each batch.

  python3 host_gap.py OUT
"""

import functools
import json
import os
import statistics
import sys
import time

import gemmreg
import torch
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import launchers, tma_rules
from triton.tools import tensor_descriptor
from triton.tools.tensor_descriptor import TensorDescriptor

out = sys.argv[1]
flush = torch.empty(4 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.int8, device="cuda")


def key(t):
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)


class LeanDescriptor(TensorDescriptor):
    memo: dict = {}

    @classmethod
    def from_tensor(cls, t, block):
        k = (key(t), tuple(block))
        d = cls.memo.get(k)
        if d is None:
            d = cls.memo[k] = TensorDescriptor.from_tensor(t, block)
        return d


@functools.lru_cache(maxsize=64)
def _refusal(ka, kb, kc, a, b, c):
    return tma_rules.tma_refusal(a, b, c)


def lean_refusal(a, b, c):
    return _refusal(key(a), key(b), key(c), a, b, c)


def lean_prepare(problem):
    saved = tensor_descriptor.TensorDescriptor, launchers.tma_refusal
    tensor_descriptor.TensorDescriptor, launchers.tma_refusal = LeanDescriptor, lean_refusal
    try:
        return triton_tuned.prepare(problem)
    finally:
        tensor_descriptor.TensorDescriptor, launchers.tma_refusal = saved


def host_times(call, count=30):
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    torch.cuda._sleep(50_000_000)  # keep the GPU busy: launches below never wait on it
    host = []
    for _ in range(count):
        t0 = time.perf_counter()
        call()
        host.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(host)


report = {}
for m, n, k in [(8192, 14336, 4096), (8192, 4096, 14336)]:
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype="fp16")
    launch = triton_tuned.prepare(problem)
    lean = lean_prepare(problem)
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=g).half()
    b = torch.randn(k, n, device="cuda", generator=g).half()
    c = torch.empty(m, n, device="cuda", dtype=torch.half)
    calls = {
        "cublas": lambda: torch.mm(a, b, out=c),
        "triton_tuned": lambda: launch(a, b, c),
        "triton_tuned_lean": lambda: lean(a, b, c),
    }
    lean(a, b, c)
    ref = c.clone()
    launch(a, b, c)
    row = {"lean_matches": bool(torch.equal(ref, c))}
    for name, call in calls.items():
        row[name] = {"host_us": host_times(call)}
    for part, work in {
        "tma_refusal": lambda: tma_rules.tma_refusal(a, b, c),
        "three_descriptors": lambda: (
            TensorDescriptor.from_tensor(a, [128, 64]),
            TensorDescriptor.from_tensor(b, [64, 256]),
            TensorDescriptor.from_tensor(c, [128, 256]),
        ),
    }.items():
        spent = []
        for _ in range(200):
            t0 = time.perf_counter()
            work()
            spent.append((time.perf_counter() - t0) * 1e6)
        row["triton_tuned"][f"{part}_us"] = statistics.median(spent)
    flush_ms = []
    for _ in range(20):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        flush.zero_()
        e1.record()
        torch.cuda.synchronize()
        flush_ms.append(e0.elapsed_time(e1))
    row["flush_ms"] = statistics.median(flush_ms)
    for primed in (False, True):
        for batch in (1, 2, 4, 8):
            for name, call in calls.items():
                first, rest = [], []
                for _ in range(max(8, 32 // batch)):
                    torch.cuda.synchronize()
                    if primed:
                        torch.cuda._sleep(400_000)  # ~200 us at 1.98 GHz
                    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(batch)]
                    for e0, e1 in pairs:
                        flush.zero_()
                        e0.record()
                        call()
                        e1.record()
                    torch.cuda.synchronize()
                    times = [e0.elapsed_time(e1) for e0, e1 in pairs]
                    first.append(times[0])
                    rest += times[1:]
                kname = f"{'primed' if primed else 'plain'} batch {batch}"
                row[name][kname] = {
                    "first_ms": statistics.median(first),
                    "rest_ms": statistics.median(rest) if rest else None,
                }
    report[f"{m}x{n}x{k}"] = row
    print(f"{m}x{n}x{k}", json.dumps(row, indent=1), flush=True)
json.dump(report, open(os.path.join(out, "host_gap.json"), "w"), indent=1)
