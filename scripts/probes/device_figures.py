"""Run on any machine, in the folder of the runs: python device_figures.py REPORT_TXT... > device-figures.txt

Split-K against cuBLAS in every run given, one line per run, point and pair:
the end-to-end verdict and the device-kernel figure (one process's, CUPTI)
beside it, read from each run's ``report.txt`` (gemmreg report's own words),
so the spread of the one-process figure between runs can be seen at a
glance. ``evidence/2026-12-02-h200-device-figure-spread/device-figures.txt``
was made over the reports of that day's split-K runs (in git history at
efbe4d9, with the rest of those runs).
"""

import re
import sys

POINT = re.compile(r"^(\d+x\d+x\d+) (fp16|bf16) ")
VERDICT = re.compile(r"^verdict: (splitk(?:_atomic)?) vs torch_ref: (\S+(?: VERDICT)?) \(speedup ([\d.]+)x")
DEVICE = re.compile(r"^  device kernels: ([\d.]+)x .*span ([\d.]+ to [\d.]+)\)")

print(f"{'run':<28} {'point':<20} {'pair':<14} {'end-to-end':<22} device kernels (its rounds' span)")
for path in sys.argv[1:]:
    run = path.removesuffix("/report.txt")
    point = pending = None
    for line in open(path):
        if m := POINT.match(line):
            point = f"{m[1]} {m[2]}"
        elif m := VERDICT.match(line):
            pending = (m[1], f"{m[2]} {m[3]}x")
        elif (m := DEVICE.match(line)) and pending:
            print(f"{run:<28} {point:<20} {pending[0]:<14} {pending[1]:<22} {m[1]}x ({m[2]})")
            pending = None
        elif not line.startswith("  "):
            pending = None
