"""Run from the repository root on a GPU machine, at a commit that still has core/gpu_monitor.py: python3 scripts/probes/nvml_probe.py OUTDIR

Probe gemmreg.gpu_monitor on a real GPU; writes traces and the device record as JSON
(evidence/2026-11-30-h200-nvml/, and the traces in tests/fixtures/nvml/recorded/).
It needs torch and nvidia-ml-py, and imports gemmreg from core/ without installing it
(the module was then ``gemmreg.gpu_monitor``; it is ``gemmreg.instruments.gpu_monitor`` now).
It only reads NVML; it changes no clock, limit or mode.
"""

import json
import os
import statistics
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
link_dir = tempfile.mkdtemp()
os.symlink(os.path.join(root, "core"), os.path.join(link_dir, "gemmreg"))
sys.path.insert(0, link_dir)

import torch  # noqa: E402

from gemmreg import gpu_monitor as gm  # noqa: E402

out = sys.argv[1]
monitor, why = gm.open_monitor(0)
print("open_monitor:", monitor is not None, why)
assert monitor is not None, why


def trace(seconds, work, every_s=0.1):
    readings, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        work()
        torch.cuda.synchronize()
        readings.append(monitor.read())
        if work is idle:
            time.sleep(every_s)
    return readings


def idle():
    pass


a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn_like(a)


def bf16_load():
    for _ in range(50):
        a @ b


costs = []
for _ in range(200):
    t0 = time.perf_counter()
    monitor.read()
    costs.append(time.perf_counter() - t0)
print(f"read(): median {statistics.median(costs) * 1e3:.2f} ms, max {max(costs) * 1e3:.2f} ms")

record = monitor.device_record()
print("busy_reason:", gm.busy_reason(record))
traces = {
    "idle": trace(3.0, idle),
    "bf16_8192_heatup": trace(12.0, bf16_load),
    "bf16_8192_soaked": trace(8.0, bf16_load),
}
summary = {}
for name, readings in traces.items():
    summary[name] = gm.trace_summary(readings)
    steady_at = next(
        (
            round(r.t_s - readings[0].t_s, 2)
            for i, r in enumerate(readings)
            if gm.clock_steady(readings[: i + 1])
        ),
        None,
    )
    summary[name]["clock_steady_after_s"] = steady_at
    summary[name]["round_drop_reason_whole_trace"] = gm.round_drop_reason(readings)
    print(name, json.dumps(summary[name]))
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump([r.to_dict() for r in readings], f, indent=0)
with open(os.path.join(out, "device_record.json"), "w") as f:
    json.dump(record, f, indent=1)
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump({"read_ms_median": statistics.median(costs) * 1e3, **summary}, f, indent=1)
print(json.dumps(record, indent=1))
monitor.close()
