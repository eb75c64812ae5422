"""Session 16: where does split-K's end-to-end ratio to cuBLAS move between
processes, and how long is its launch path on the host?

Session 15's ``k1`` (5 processes, read flush): at 64x4096x16384 the
per-process paired ratios of splitk to torch_ref ran 1.006-1.034 (fp16) and
1.001-1.015 (bf16), each process sure of its own to about +-0.5%; graph
replay 1.035-1.07. Each process draws one placement of the operands there
(130 MiB a set: ``gemmreg.running.placements`` keeps one copy past 256 MiB).
And at 128x128x32768 bf16 one process's split-K slots rose fourfold while
cuBLAS's did not: a launch path exposed by a slow host?

In one process, per shape and dtype:
1. ``sets``: cuBLAS, splitk and splitk_atomic (the plugin's own prepare) on
   SETS fresh allocations of A, B, C, timed as gemmreg times them (a spin,
   then per sample the read flush, start event, call, end event; BATCH per
   batch, one synchronisation), rounds with the order rotated: each cell's
   median. Does the ratio move with the placement?
2. ``host``: each launch's host time per call, queued behind a long GPU
   spin (the host never waits): what a call costs the host.
3. ``flush``: the read flush's own time (4x L2 read: HBM read bandwidth).

  python3 skprobe.py OUT
"""

import json
import os
import statistics
import sys
import time

import gemmreg
import torch
from gemmreg_splitk import plugin

out = sys.argv[1]
SETS, ROUNDS, BATCH = 6, 8, 10
props = torch.cuda.get_device_properties(0)
flush = torch.empty(4 * props.L2_cache_size // 8, dtype=torch.int64, device="cuda")
sink = torch.empty((), dtype=torch.int64, device="cuda")


def batch_ms(call):
    pairs = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        for _ in range(BATCH)
    ]
    torch.cuda._sleep(500_000)
    for e0, e1 in pairs:
        torch.sum(flush, dim=0, out=sink)
        e0.record()
        call()
        e1.record()
    torch.cuda.synchronize()
    return [e0.elapsed_time(e1) for e0, e1 in pairs]


def rounds(cells):
    labels = list(cells)
    got = {label: [] for label in labels}
    for r in range(ROUNDS):
        order = labels[r % len(labels) :] + labels[: r % len(labels)]
        if r % 2:
            order.reverse()
        for label in order:
            got[label].append(statistics.median(batch_ms(cells[label])))
    return {label: statistics.median(v) for label, v in got.items()}


def host_us(call, n=200):
    torch.cuda.synchronize()
    torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU: every launch below only queues
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


report = {}
f_pairs = [
    (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(20)
]
for e0, e1 in f_pairs:
    e0.record()
    torch.sum(flush, dim=0, out=sink)
    e1.record()
torch.cuda.synchronize()
fl = statistics.median(e0.elapsed_time(e1) for e0, e1 in f_pairs)
report["flush_ms"] = fl
print(
    f"read flush: {fl * 1e3:.1f} us for {flush.numel() * 8 / 2**20:.0f} MiB = "
    f"{flush.numel() * 8 / fl / 1e9:.2f} TB/s",
    flush=True,
)
for m, n, k in [(64, 4096, 16384), (32, 8192, 8192), (128, 128, 32768)]:
    for dtype in ("bf16", "fp16"):
        problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype)
        td = gemmreg.torch_dtype(dtype)
        launches = {
            "cublas": None,
            "splitk": plugin.make_prepare(False)(problem),
            "atomic": plugin.make_prepare(True)(problem),
        }
        sets = []
        for i in range(SETS):
            g = torch.Generator(device="cuda").manual_seed(i)
            sets.append(
                (
                    torch.randn(m, k, device="cuda", generator=g).to(td),
                    torch.randn(k, n, device="cuda", generator=g).to(td),
                    torch.empty(m, n, device="cuda", dtype=td),
                )
            )

        def call(label, a, b, c):
            if label == "cublas":
                return lambda: torch.mm(a, b, out=c)
            launch = launches[label]
            return lambda: launch(a, b, c)

        a0, b0, c0 = sets[0]
        ref = a0.float() @ b0.float()
        for label in launches:
            for _ in range(50):
                call(label, a0, b0, c0)()
            torch.cuda.synchronize()
            assert ((c0.float() - ref).abs().max() / ref.abs().max()).item() < 2e-2, label
        key = f"{m}x{n}x{k} {dtype}"
        row = {"addresses": [[hex(t.data_ptr()) for t in s] for s in sets]}
        cells = {f"{label}|{i}": call(label, *s) for label in launches for i, s in enumerate(sets)}
        row["sets"] = rounds(cells)
        row["host_us"] = {label: host_us(call(label, a0, b0, c0)) for label in launches}
        report[key] = row
        ms = row["sets"]
        for label in ("splitk", "atomic"):
            ratios = [ms[f"cublas|{i}"] / ms[f"{label}|{i}"] for i in range(SETS)]
            print(
                f"{key} {label:6s} cublas/it per set: " + " ".join(f"{r:.4f}" for r in ratios),
                flush=True,
            )
        for label in launches:
            print(
                f"{key} {label:6s} ms per set: "
                + " ".join(f"{ms[f'{label}|{i}']:.5f}" for i in range(SETS)),
                flush=True,
            )
        print(
            f"{key} host us per call: "
            + " ".join(f"{l} {v:.1f}" for l, v in row["host_us"].items()),
            flush=True,
        )
        del sets, cells
        torch.cuda.empty_cache()
json.dump(report, open(os.path.join(out, "skprobe.json"), "w"), indent=1)
