"""Run in the runs' folder: python ../../scripts/probes/device_verdicts.py p1/splitkpairs-1/report.txt d1/dev24/report.txt > device-verdicts.txt

Split-K against cuBLAS in each pairs run, one line per point and pair: the
end-to-end verdict and the device-kernel verdict judged across the run's
profiling processes (``--device-processes``), read from each run's
``report.txt`` (gemmreg report's own words); the command above, in
``evidence/2026-12-03-h200-kernel-speed-verdicts/``, makes its
``device-verdicts.txt``.
"""

import re
import sys

POINT = re.compile(r"^(\d+x\d+x\d+) (fp16|bf16) ")
VERDICT = re.compile(r"^verdict: (splitk(?:_atomic)?) vs torch_ref: (\S+) \(speedup ([\d.]+)x")
DEVICE = re.compile(r"^  device kernels: (\w+) ([\d.]+)x \(([\d.]+ to [\d.]+)\)")

print(f"{'run':<24} {'point':<20} {'pair':<14} {'end-to-end':<20} device kernels (interval)")
for path in sys.argv[1:]:
    run = path.removesuffix("/report.txt")
    point = pending = None
    for line in open(path):
        if m := POINT.match(line):
            point = f"{m[1]} {m[2]}"
        elif m := VERDICT.match(line):
            pending = (m[1], f"{m[2]} {m[3]}x")
        elif (m := DEVICE.match(line)) and pending:
            word = m[1].upper()
            print(f"{run:<24} {point:<20} {pending[0]:<14} {pending[1]:<20} {word} {m[2]}x ({m[3]})")
            pending = None
        elif not line.startswith("  "):
            pending = None
