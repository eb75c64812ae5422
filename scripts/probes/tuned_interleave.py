"""Run on an H200 from the wheels of 8e21403: python scripts/probes/tuned_interleave.py OUT [fp16,bf16,fp32] [ROUNDS]

triton_tuned's persistent candidates against cuBLAS (torch.mm),
timed in interleaved rounds (each round times every variant once, order rotated,
L2 flushed before each call), so no variant sees other clocks than the rest.

Variants per point: every config of the shipped list at the shipped grid
(``persistent_programs``: 128 programs at these shapes), a few of them at the
grid before b95d140 (one program per SM, 132), and some tiles not in the list.
Prints a table per point (median over rounds of cuBLAS time / variant time, the
ratio's spread) and writes everything to OUT/interleave.json.
"""

import json
import os
import statistics
import sys
import time

import torch
from gemmreg_plugins.triton_tuned import configs, launchers
from gemmreg_plugins.triton_tuned.configs import _tiled, _tma

out = sys.argv[1]
dtypes = (sys.argv[2] if len(sys.argv) > 2 else "fp16,bf16,fp32").split(",")
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 25
sms = torch.cuda.get_device_properties(0).multi_processor_count
shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336)]
fallback = _tiled(128, 256, 64, 3, 8)
half_extra = [
    _tma(256, 128, 64, 3, 8, flatten=True),
    _tma(256, 128, 64, 3, 8, flatten=True, ws=True),
    _tma(256, 128, 64, 4, 8, flatten=True, split=2),
    _tma(128, 256, 64, 4, 8, flatten=True, ws=True, split=4),
    _tma(128, 256, 64, 3, 8, flatten=True, group_m=4),
]
half_at_132 = [configs.CUDA_PERSISTENT_TMA[i] for i in (0, 1, 3, 9)]
tf32_list = [c for c in configs.CUDA_PERSISTENT_TMA_TF32 if c.transpose_b]
tf32_extra = [_tma(128, 256, 32, 3, 8, split=2, transpose_b=True, group_m=16)]
torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
shipped_programs = launchers.persistent_programs


def one_per_sm(tiles, num_sms):
    return min(tiles, num_sms)


def build(config, m, n, k, precision, programs):
    launchers.persistent_programs = programs
    try:
        return launchers.launcher(config, m, n, k, precision, sms, fallback=fallback)
    finally:
        launchers.persistent_programs = shipped_programs


rows = []
torch.backends.cuda.matmul.allow_tf32 = False
for dt in dtypes:
    precision = "tf32" if dt == "fp32" else "ieee"
    if dt == "fp32":
        variants = [(c, shipped_programs, "") for c in tf32_list + tf32_extra]
        variants += [(c, one_per_sm, "@132") for c in tf32_list]
    else:
        variants = [(c, shipped_programs, "") for c in configs.CUDA_PERSISTENT_TMA + tuple(half_extra)]
        variants += [(c, one_per_sm, "@132") for c in half_at_132]
    for m, n, k in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(m, k, device="cuda", generator=g).to(torch_dtype[dt])
        b = torch.randn(k, n, device="cuda", generator=g).to(torch_dtype[dt])
        torch.backends.cuda.matmul.allow_tf32 = dt == "fp32"
        ref = torch.mm(a.double(), b.double()) if dt != "fp32" else None
        calls = {"cublas": lambda a=a, b=b: torch.mm(a, b)}
        errors = {}
        for config, programs, tag in variants:
            name = config.name + tag
            try:
                launch = build(config, m, n, k, precision, programs)
                c = torch.full((m, n), float("nan"), device="cuda", dtype=torch_dtype[dt])
                start = time.monotonic()
                launch(a, b, c)
                torch.cuda.synchronize()
                want = torch.mm(a, b) if ref is None else ref
                err = ((c.double() - want.double()).abs().max() / want.double().abs().max()).item()
                if not err < 2e-2:
                    errors[name] = f"wrong C: rel err {err}"
                    continue
                calls[name] = lambda launch=launch, a=a, b=b, c=c: launch(a, b, c)
                print(f"  built {name} in {time.monotonic() - start:.1f} s", flush=True)
            except Exception as e:  # a variant that does not compile or launch
                errors[name] = f"{type(e).__name__}: {str(e)[:200]}"
        names = list(calls)
        for f in calls.values():  # warm up
            for _ in range(3):
                f()
        torch.cuda.synchronize()
        times = {nm: [] for nm in names}
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in names]
        for r in range(rounds):
            order = names[r % len(names):] + names[: r % len(names)]
            for nm, (e0, e1) in zip(order, events):
                flush.zero_()
                e0.record()
                calls[nm]()
                e1.record()
            torch.cuda.synchronize()
            for nm, (e0, e1) in zip(order, events):
                times[nm].append(e0.elapsed_time(e1))
        base = times["cublas"]
        print(f"{dt} {m}x{n}x{k}: cublas median {statistics.median(base):.4f} ms", flush=True)
        table = []
        for nm in names[1:]:
            ratios = sorted(x / y for x, y in zip(base, times[nm]))
            q = len(ratios) // 4
            table.append((statistics.median(ratios), ratios[q], ratios[-q - 1], nm, statistics.median(times[nm])))
        for med, lo, hi, nm, ms in sorted(table, reverse=True):
            print(f"  {med:.4f}x (IQR {lo:.4f}-{hi:.4f}) {ms:.4f} ms  {nm}", flush=True)
        for nm, why in errors.items():
            print(f"  FAILED {nm}: {why}", flush=True)
        rows.append(dict(dtype=dt, shape=[m, n, k], times=times, errors=errors))
        del a, b, ref, calls
        torch.cuda.empty_cache()
json.dump(dict(device=torch.cuda.get_device_name(), sms=sms, rounds=rounds, rows=rows),
          open(os.path.join(out, "interleave.json"), "w"))
