"""Run on an H200 from the wheels of 29c3e80: python scripts/probes/l2_flush_trace.py OUT M N K

Where do triton_tuned's extra microseconds end to end go? Per-process
probes found it 3-5% behind cuBLAS at the long shapes when L2 is
flushed by zeroing a buffer (as gemmreg and ``do_bench`` did) and samples go
in batches of two per synchronisation, but 0.3-0.8% behind when the flush
reads the buffer; the device-kernel regime (no flush) has it 0.4-0.6% behind.

This records the device activity (torch's profiler, CUPTI) of 30 batches of
two samples per kernel, zero flush and read flush, and prints per kernel the
median GEMM kernel duration (``triton_tuned_lean``: its TMA checks and
descriptors memoised per operand set, ``host_gap_lean.py``), the gap from the
flush's end to the GEMM's start (the events lie in it), and the median event
time, also for the first and the second sample of each batch apart.

``t1`` (evidence/2026-12-02-h200-l2-flush-write-back/) ran this before
``triton_tuned_lean`` and the per-position rows were added (its rows are the
cuBLAS and triton_tuned ones without them); ``t2`` ran it as it is.
"""

import json
import os
import statistics
import sys

import gemmreg
import torch
from gemmreg_plugins import triton_tuned

out, (m, n, k) = sys.argv[1], map(int, sys.argv[2:5])
props = torch.cuda.get_device_properties(0)
flush = torch.empty(4 * props.L2_cache_size, dtype=torch.int8, device="cuda")
sink = torch.empty((), dtype=torch.int64, device="cuda")
problem = gemmreg.Problem(m=m, n=n, k=k, dtype="fp16")
launch = triton_tuned.prepare(problem)
g = torch.Generator(device="cuda").manual_seed(0)
a = torch.randn(m, k, device="cuda", generator=g).half()
b = torch.randn(k, n, device="cuda", generator=g).half()
c = torch.empty(m, n, device="cuda", dtype=torch.half)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_gap_lean import lean_prepare  # noqa: E402

lean = lean_prepare(problem)
calls = {"cublas": lambda: torch.mm(a, b, out=c), "triton_tuned": lambda: launch(a, b, c),
         "triton_tuned_lean": lambda: lean(a, b, c)}


def do_flush(kind):
    if kind == "zero":
        flush.zero_()
    else:
        torch.sum(flush, dim=0, dtype=torch.int64, out=sink)


def batches(call, kind, count):
    events = []
    for _ in range(count):
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(2)]
        for e0, e1 in pairs:
            do_flush(kind)
            e0.record()
            call()
            e1.record()
        torch.cuda.synchronize()
        events += [e0.elapsed_time(e1) for e0, e1 in pairs]
    return events


for call in calls.values():  # soak
    batches(call, "zero", 200)
report = {}
for kind in ("zero", "read"):
    for name, call in calls.items():
        batches(call, kind, 5)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            event_ms = batches(call, kind, 30)
        path = os.path.join(out, f"trace-{m}x{n}x{k}-{kind}-{name}.json")
        prof.export_chrome_trace(path)
        trace = json.load(open(path))
        os.remove(path)
        kernels = sorted((e for e in trace["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
        durations, gaps, names = [], [], set()
        for before, gemm in zip(kernels, kernels[1:]):
            is_flush = "fill" in before["name"].lower() or "reduce" in before["name"].lower()
            if is_flush and not ("fill" in gemm["name"].lower() or "reduce" in gemm["name"].lower()):
                durations.append(gemm["dur"])
                gaps.append(gemm["ts"] - (before["ts"] + before["dur"]))
                names.add(gemm["name"][:60])
        row = {"kernels": sorted(names), "samples": len(durations),
               "kernel_us": statistics.median(durations), "gap_us": statistics.median(gaps),
               "gap_us_max": max(gaps), "event_ms": statistics.median(event_ms),
               "all_kernels_per_sample": len(kernels) / max(1, len(event_ms))}
        if len(durations) == len(event_ms):  # the first and second sample of each batch apart
            for pos in (0, 1):
                row[f"sample {pos + 1} of 2"] = {
                    "kernel_us": statistics.median(durations[pos::2]),
                    "gap_us": statistics.median(gaps[pos::2]),
                    "event_ms": statistics.median(event_ms[pos::2]),
                }
        report[f"{kind} {name}"] = row
        print(m, n, k, kind, name, json.dumps(row), flush=True)
json.dump(report, open(os.path.join(out, f"trace-{m}x{n}x{k}.json"), "w"), indent=1)
