"""Run on an H200 from the wheels of c4d1594: python scripts/probes/splitk_launch_modes.py OUT

Split-K's slow phases. Under ``gemmreg bench`` and the split-K tuner,
split-K's end-to-end samples sometimes
ran about twice as long for whole rounds (a process's last rounds at
64x4096x16384 fp16; from round 6 of one process at 128x128x32768 bf16; the
first candidate of several tuner groups), while cuBLAS and triton_grouped,
timed between them, did not. Is it the host (split-K's Python launch path
falling behind the GPU) or the kernel on the GPU?

Per config, in one process, BATCHES batches of BATCH samples each, as gemmreg
times them (a spin, then per sample the read flush, start event, call, end
event; one synchronisation), in three forms, interleaved batch by batch:
  ``plugin``: the plugin's launch (its Python path, as gemmreg bench calls it),
  ``graph``: the same call captured once in a CUDA graph and replayed
             (a ~few-us host path: the kernel's own time after a flush),
  ``cublas``: torch.mm on the same operands.
Each batch also records the host's time to queue it (perf_counter), so a
slow batch can be told host-bound (queueing took longer than the GPU's
batch) or not. Prints per form: median, 90th percentile, max of the
per-batch medians, and how many batches were over 1.3x the form's best.
"""

import json
import os
import statistics
import sys
import time

import gemmreg
import torch
from gemmreg_splitk import heuristics, plugin

out = sys.argv[1]
BATCHES, BATCH = 60, 10
props = torch.cuda.get_device_properties(0)
flush = torch.empty(4 * props.L2_cache_size // 8, dtype=torch.int64, device="cuda")
sink = torch.empty((), dtype=torch.int64, device="cuda")
where = gemmreg.where()


def batch(call):
    pairs = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        for _ in range(BATCH)
    ]
    torch.cuda._sleep(500_000)
    t0 = time.perf_counter()
    for e0, e1 in pairs:
        torch.sum(flush, dim=0, out=sink)
        e0.record()
        call()
        e1.record()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return [e0.elapsed_time(e1) for e0, e1 in pairs], (t1 - t0) * 1e3, (t2 - t0) * 1e3


def graphed(call):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        call()
        call()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        call()
    g.replay()
    torch.cuda.synchronize()
    return g.replay


def cfg(m, n, k, **over):
    return heuristics._finish(
        over.pop("bm"), over.pop("bn"), over.pop("bk"), over.pop("split"), k, 2, **over
    )


CASES = [
    ((64, 4096, 16384), "current", None),
    ((64, 4096, 16384), "s4-serial", dict(bm=64, bn=64, bk=128, split=2, num_warps=4, num_stages=4)),
    ((64, 4096, 16384), "s4-tma-serial", dict(bm=64, bn=64, bk=128, split=2, num_warps=4, num_stages=4, tma=True)),
    ((128, 128, 32768), "current", None),
    ((32, 8192, 8192), "current", None),
]
report = {}
for (m, n, k), name, over in CASES:
    for dtype in ("bf16", "fp16"):
        problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype)
        td = gemmreg.torch_dtype(dtype)
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(m, k, device="cuda", generator=g).to(td)
        b = torch.randn(k, n, device="cuda", generator=g).to(td)
        c = torch.empty(m, n, device="cuda", dtype=td)
        if over is None:
            launch = plugin.make_prepare(False)(problem)
        else:
            launch = plugin.build_launch(m, n, k, cfg(m, n, k, **dict(over)), False, where)
        ref = a.float() @ b.float()
        for _ in range(20):
            launch(a, b, c)
        torch.cuda.synchronize()
        rel = ((c.float() - ref).abs().max() / ref.abs().max()).item()
        assert rel < 2e-2, (name, dtype, rel)
        forms = {
            "plugin": lambda: launch(a, b, c),
            "graph": graphed(lambda: launch(a, b, c)),
            "cublas": lambda: torch.mm(a, b, out=c),
        }
        got = {f: [] for f in forms}
        for i in range(BATCHES):
            order = list(forms) if i % 2 == 0 else list(forms)[::-1]
            for f in order:
                samples, queue_ms, wall_ms = batch(forms[f])
                got[f].append(
                    {"median_ms": statistics.median(samples), "gpu_ms": sum(samples),
                     "queue_ms": queue_ms, "wall_ms": wall_ms}
                )
        key = f"{m}x{n}x{k} {dtype} {name}"
        report[key] = got
        line = []
        for f, rows in got.items():
            med = sorted(r["median_ms"] * 1e3 for r in rows)
            best = med[0]
            slow = [r for r in rows if r["median_ms"] * 1e3 > 1.3 * best]
            hostb = sum(1 for r in slow if r["queue_ms"] > r["wall_ms"] * 0.9)
            qmed = statistics.median(r["queue_ms"] for r in rows) * 1e3 / BATCH
            line.append(
                f"{f} med {statistics.median(med):.2f} p90 {med[int(0.9 * len(med))]:.2f} "
                f"max {med[-1]:.2f} slow {len(slow)}/{len(rows)} (queue-bound {hostb}) "
                f"queue/sample {qmed:.1f}us"
            )
        print(key + ": " + " | ".join(line), flush=True)
json.dump(report, open(os.path.join(out, "skmodes.json"), "w"), indent=1)
