"""For the next session (not run in session 14): is triton_tuned's end-to-end
gap at the long shapes its host launch path, exposed at the start of each
batch of samples?

Why the question (session 14's ``s2``, ``s3``, ``s6``): gemmreg's end-to-end
samples are flush, start event, call, end event, queued in batches of about
two at these shapes (a slot of ~7 samples in ``SLOT_BATCHES`` = 4 batches)
and read after one synchronisation each. After a synchronisation the GPU is
idle: it runs the flush (~80 us) while the host prepares the call, and a
call whose host path takes longer than the flush starts late, inside the
events. cuBLAS's host path is short; triton_tuned's (three TMA
descriptors, the TMA checks, Triton's dispatch of ~25 arguments) may not
be. triton_tuned's event medians vary by process from 1.00x to 1.09x of
cuBLAS's while its wall time per sample varies far less, and the tuner
(``do_bench``: one synchronisation per 20 ms) sees no such gap.

What this measures, at 8192x14336x4096 and 8192x4096x14336 in fp16:
1. each kernel's host time per launch (no synchronisation, GPU kept busy),
   and of triton_tuned's own parts of it (the TMA checks, the descriptors);
2. event times in batches of 1, 2, 4 and 8 samples, each batch after a
   synchronisation: the first sample of a batch against the others;
3. the same with a ~200 us GPU sleep queued before each batch, so the host
   is ahead before the first flush ends.
If (2)'s first samples carry triton_tuned's excess and (3) removes it, the
gap is host time (the fix: a shorter launch path, or a protocol that hides
it equally); if not, look at placement and the flush's dirty lines.

  python3 host_gap.py OUT
"""

import json
import os
import statistics
import sys
import time

import gemmreg
import torch
from gemmreg_plugins import triton_tuned

out = sys.argv[1]
flush = torch.empty(4 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.int8, device="cuda")
report = {}
for m, n, k in [(8192, 14336, 4096), (8192, 4096, 14336)]:
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype="fp16")
    launch = triton_tuned.prepare(problem)
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=g).half()
    b = torch.randn(k, n, device="cuda", generator=g).half()
    c = torch.empty(m, n, device="cuda", dtype=torch.half)
    calls = {"cublas": lambda: torch.mm(a, b, out=c), "triton_tuned": lambda: launch(a, b, c)}
    row = {}
    for name, call in calls.items():
        for _ in range(5):
            call()
        torch.cuda.synchronize()
        torch.cuda._sleep(50_000_000)  # keep the GPU busy: launches below never wait on it
        host = []
        for _ in range(30):
            t0 = time.perf_counter()
            call()
            host.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
        row[name] = {"host_us": statistics.median(host)}
    # the parts of triton_tuned's host path that are ours, not Triton's dispatch
    from gemmreg_plugins.triton_tuned import tma_rules
    from triton.tools.tensor_descriptor import TensorDescriptor

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
                key = f"{'primed' if primed else 'plain'} batch {batch}"
                row[name][key] = {
                    "first_ms": statistics.median(first),
                    "rest_ms": statistics.median(rest) if rest else None,
                }
    report[f"{m}x{n}x{k}"] = row
    print(f"{m}x{n}x{k}", json.dumps(row, indent=1), flush=True)
json.dump(report, open(os.path.join(out, "host_gap.json"), "w"), indent=1)
