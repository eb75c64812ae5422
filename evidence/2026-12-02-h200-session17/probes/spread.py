"""Session 17, read from saved runs (no GPU): where does the spread of a pair's
per-process ratios come from? For one point of a saved `gemmreg bench` run,
per process: each kernel's median round figure on each operand placement
(rounds rotate placements: round i uses placement i % P) and the spread of
its rounds within a placement, beside the process's paired end-to-end ratio.
A spread between placements inside a process would say "placement"; figures
level across a process's placements but different between processes say
"something fixed for the process's life".

  python3 spread.py RUN_DIR SHAPE DTYPE BASELINE KERNEL
"""

import gzip
import json
import math
import statistics as st
import sys

run, shape, dtype, base, kern = sys.argv[1:6]
m, n, k = (int(x) for x in shape.split("x"))
with gzip.open(f"{run}/run.json.gz") as fh:
    data = json.load(fh)
for rep in data["reports"]:
    p = rep["problem"]
    if (p["m"], p["n"], p["k"], p["dtype"]) != (m, n, k, dtype):
        continue
    print(f"{run} {shape} {dtype}: per process, median us per placement (sd of rounds within one)")
    spans = {base: [], kern: []}
    for rec in rep["records"]:
        proc, places = rec["process"], rec["placements"]
        runs = {r["kernel"]: r["round_ms"] for r in rep["runs"] if r["process"] == proc}
        rounds = min(len(runs[base]), len(runs[kern]))
        parts = []
        for name in (base, kern):
            per = [st.median(runs[name][i] * 1e3 for i in range(q, rounds, places)) for q in range(places)]
            sd = st.mean(st.pstdev([runs[name][i] * 1e3 for i in range(q, rounds, places)]) for q in range(places))
            spans[name].append(st.median(per))
            parts.append(f"{name} " + " ".join(f"{x:.2f}" for x in per) + f" (sd {sd:.2f})")
        ratio = math.exp(rec["log_ratios"]["end-to-end"][f"{base}|{kern}"])
        print(f"  process {proc}: ratio {ratio:.4f} | " + " | ".join(parts))
    for name, meds in spans.items():
        print(f"  {name}: process medians {min(meds):.2f}-{max(meds):.2f} us ({max(meds) / min(meds) - 1:.1%})")
