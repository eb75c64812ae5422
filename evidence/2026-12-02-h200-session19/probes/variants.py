"""Session-19 probe: variants of triton_tuned's usual winner
(128x256x64-s3-w8-g8-flat) that its candidate list does not hold, beside
cuBLAS (torch.mm), at the points where it sits 0.7-0.8% behind cuBLAS
(4096^3 fp16, 8192x14336x4096) and the other two large shapes.

Variants: GROUP_M 4/16/32; the C store in four boxes (3 and 4 stages);
BLOCK_K 128 in 2 stages (half the K steps, so half the per-step barriers
Triton 3.6 emits), flattened or not; the listed 4-stage split form.
Each round times every variant once, order rotated and reversed every other
pass, 256 MB written between calls to flush L2 (session 14's sk_probe.py).

  python3 variants.py OUT [fp16,bf16] [ROUNDS] [SHAPES]
"""

import json
import os
import statistics
import sys
import time

import attrs
import torch
from gemmreg_plugins.triton_tuned import launchers
from gemmreg_plugins.triton_tuned.configs import _tiled, _tma

out = sys.argv[1]
dtypes = (sys.argv[2] if len(sys.argv) > 2 else "fp16,bf16").split(",")
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 60
shape_arg = sys.argv[4] if len(sys.argv) > 4 else "4096x4096x4096,8192x14336x4096"
shapes = [tuple(int(x) for x in s.split("x")) for s in shape_arg.split(",")]
sms = torch.cuda.get_device_properties(0).multi_processor_count
fallback = _tiled(128, 256, 64, 3, 8)
torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}
flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
base = _tma(128, 256, 64, 3, 8, flatten=True)
variants = [
    base,
    attrs.evolve(base, group_m=4),
    attrs.evolve(base, group_m=16),
    attrs.evolve(base, group_m=32),
    attrs.evolve(base, epilogue_parts=4),
    attrs.evolve(base, num_stages=4, epilogue_parts=4),
    _tma(128, 256, 64, 4, 8, flatten=True, split=2),
    _tma(128, 256, 128, 2, 8, flatten=True, split=2),
    _tma(128, 256, 128, 2, 8, split=2),
    _tma(128, 256, 128, 2, 8, flatten=True, split=4),
]
report = {"device": torch.cuda.get_device_name(), "sms": sms, "rounds": rounds, "rows": []}
for dt in dtypes:
    for m, n, k in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(m, k, device="cuda", generator=g).to(torch_dtype[dt])
        b = torch.randn(k, n, device="cuda", generator=g).to(torch_dtype[dt])
        calls = {"cublas": lambda a=a, b=b: torch.mm(a, b)}
        ref = torch.mm(a, b).double()
        errors = {}
        for config in variants:
            try:
                start = time.monotonic()
                launch = launchers.launcher(config, m, n, k, "ieee", sms, fallback=fallback)
                c = torch.empty((m, n), device="cuda", dtype=torch_dtype[dt])
                launch(a, b, c)
                torch.cuda.synchronize()
                err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
                if not err < 2e-2:
                    errors[config.name] = f"wrong C: rel err {err}"
                    continue
                calls[config.name] = lambda launch=launch, a=a, b=b, c=c: launch(a, b, c)
                print(f"  built {config.name} in {time.monotonic() - start:.1f} s", flush=True)
            except Exception as e:
                errors[config.name] = f"{type(e).__name__}: {str(e)[:200]}"
        del ref
        names = list(calls)
        for f in calls.values():
            for _ in range(3):
                f()
        torch.cuda.synchronize()
        times = {nm: [] for nm in names}
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in names
        ]
        for r in range(rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            if (r // len(names)) % 2:
                order.reverse()
            for nm, (e0, e1) in zip(order, events):
                flush.zero_()
                e0.record()
                calls[nm]()
                e1.record()
            torch.cuda.synchronize()
            for nm, (e0, e1) in zip(order, events):
                times[nm].append(e0.elapsed_time(e1))
        cub = times["cublas"]
        print(f"{dt} {m}x{n}x{k}: cublas median {statistics.median(cub):.4f} ms", flush=True)
        table = []
        for nm in names[1:]:
            ratios = sorted(x / y for x, y in zip(cub, times[nm]))
            q = len(ratios) // 4
            table.append((statistics.median(ratios), ratios[q], ratios[-q - 1], nm,
                          statistics.median(times[nm])))  # fmt: skip
        for med, lo, hi, nm, ms in sorted(table, reverse=True):
            print(f"  {med:.4f}x (IQR {lo:.4f}-{hi:.4f}) {ms:.4f} ms  {nm}", flush=True)
        for nm, why in errors.items():
            print(f"  FAILED {nm}: {why}", flush=True)
        report["rows"].append(dict(dtype=dt, shape=[m, n, k], times=times, errors=errors))
        json.dump(report, open(os.path.join(out, "variants.json"), "w"))
        del a, b, calls
        torch.cuda.empty_cache()
