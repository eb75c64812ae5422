"""Session 15: why does triton_tuned's end-to-end time at the long shapes
move by up to 8% from process to process while cuBLAS's holds within 1%?

Session 14's ``s6`` (and ``s2``, ``s3``): at 8192x14336x4096 and
8192x4096x14336 triton_tuned's process medians spread 1.24-1.34 ms against
cuBLAS's 1.20-1.23 ms, and the per-process paired log-ratios end to end run
from -0.3% to -8.3%, each process sure of its own to +-0.5% or better;
under graph replay (warm, no flush) the same processes agree to +-0.5%.
Each process draws one placement of every kernel's operands at these sizes
(``gemmreg.running.placements``: one copy past 256 MiB). So: does
triton_tuned's cold time depend on where A, B and C lie, and which of them?

In one process, per shape (fp16): SETS fresh allocations of A, B, C.
1. ``sets``: every kernel on every set, end to end as gemmreg times it
   (flush with zero_, start event, call, end event; 3 per batch, one sync),
   rounds with the order rotated: each kernel's median per set.
2. ``operand``: triton_tuned (the tuner's pick) and cuBLAS with one operand
   taken from each set in turn, the other two from set 0.
3. ``flush``: 1. for those two with the flush replaced by a read of the
   buffer (clean lines left in L2), and with no flush at all.
Kernels: cuBLAS, and triton_tuned's configs ``flat`` (the tuner's usual
pick), ``flat-sk`` (stream-K), ``pertile`` (one program per tile), built
as the plugin builds them. (As it ran in ``p1``: the three labels never
matched, candidates' names carry their path, ``persistent_tma:...``, so
only cuBLAS and the tuner's pick, which is ``flat`` at both shapes, were
timed. ``processes.py`` times the others.)

  python3 placement.py OUT
"""

import json
import os
import statistics
import sys

import gemmreg
import torch
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import configs, launchers, tuner

out = sys.argv[1]
SETS, ROUNDS, BATCH = 6, 8, 3
props = torch.cuda.get_device_properties(0)
num_sms = props.multi_processor_count
flush = torch.empty(4 * props.L2_cache_size, dtype=torch.int8, device="cuda")
sink = torch.empty((), dtype=torch.int64, device="cuda")


def do_flush(kind):
    if kind == "zero":
        flush.zero_()
    elif kind == "read":
        torch.sum(flush, dim=0, dtype=torch.int64, out=sink)


def batch_ms(call, kind):
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(BATCH)]
    for e0, e1 in pairs:
        do_flush(kind)
        e0.record()
        call()
        e1.record()
    torch.cuda.synchronize()
    return [e0.elapsed_time(e1) for e0, e1 in pairs]


def rounds(cells, kind="zero", rounds_=ROUNDS):
    """cells: {label: call}; every cell once per round, order rotated; medians."""
    labels = list(cells)
    got = {label: [] for label in labels}
    for r in range(rounds_):
        order = labels[r % len(labels):] + labels[: r % len(labels)]
        if r % 2:
            order.reverse()
        for label in order:
            got[label] += batch_ms(cells[label], kind)
    return {label: statistics.median(v) for label, v in got.items()}


report = {}
for m, n, k in [(8192, 4096, 14336), (8192, 14336, 4096)]:
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype="fp16")
    triton_tuned.prepare(problem)  # tunes (or reads the cache): the tuner's pick is logged
    choice, precision, _ = triton_tuned.choose(problem, gemmreg.where())
    cands = configs.candidates("cuda", "fp16", m, n, k, True)
    fallback = tuner.fallback_of(cands, {})
    by_name = {c.name: c for c in cands}
    wanted = {"tuned": choice.best.name, "flat": "128x256x64-s3-w8-g8-flat",
              "flat-sk": "128x256x64-s3-w8-g16-flat-sk", "pertile": "128x256x64-s3-w8-g8-pertile"}
    launches = {"cublas": None}
    for label, name in wanted.items():
        if name in by_name:
            launches[label] = launchers.launcher(by_name[name], m, n, k, precision, num_sms, fallback=fallback)
    sets = []
    for i in range(SETS):
        g = torch.Generator(device="cuda").manual_seed(i)
        a = torch.randn(m, k, device="cuda", generator=g).half()
        b = torch.randn(k, n, device="cuda", generator=g).half()
        c = torch.empty(m, n, device="cuda", dtype=torch.half)
        sets.append((a, b, c))

    def call(label, a, b, c):
        if label == "cublas":
            return lambda: torch.mm(a, b, out=c)
        launch = launches[label]
        return lambda: launch(a, b, c)

    a0, b0, c0 = sets[0]
    for label in launches:  # heat soak, and each kernel's C checked once
        for _ in range(200 if label == "cublas" else 100):
            call(label, a0, b0, c0)()
    torch.cuda.synchronize()
    ref = (a0.float() @ b0.float())
    for label in launches:
        call(label, a0, b0, c0)()
        assert (c0.float() - ref).abs().max().item() < 0.5, label
    row = {"configs": wanted, "chosen": choice.best.name,
           "addresses": [[hex(t.data_ptr()) for t in s] for s in sets]}
    cells = {f"{label}|{i}": call(label, *s) for label in launches for i, s in enumerate(sets)}
    row["sets"] = rounds(cells)
    pair = [lab for lab in ("cublas", "tuned") if lab in launches]
    op_cells = {}
    for label in pair:
        for i, (a, b, c) in enumerate(sets):
            op_cells[f"{label}|A{i}"] = call(label, a, b0, c0)
            op_cells[f"{label}|B{i}"] = call(label, a0, b, c0)
            op_cells[f"{label}|C{i}"] = call(label, a0, b0, c)
    row["operand"] = rounds(op_cells, rounds_=6)
    for kind in ("read", "none"):
        row[f"flush {kind}"] = rounds({key: cell for key, cell in cells.items() if key.split("|")[0] in pair}, kind)
    report[f"{m}x{n}x{k}"] = row
    for part in ("sets", "operand", "flush read", "flush none"):
        labels = sorted({key.split("|")[0] for key in row[part]})
        for label in labels:
            vals = {key.split("|")[1]: v for key, v in row[part].items() if key.startswith(label + "|")}
            print(f"{m}x{n}x{k} {part:10s} {label:8s}", " ".join(f"{s}:{v:.4f}" for s, v in vals.items()), flush=True)
    del sets, cells, op_cells
    torch.cuda.empty_cache()
json.dump(report, open(os.path.join(out, "placement.json"), "w"), indent=1)
