"""Run on an H200 from the wheels of 0d1961e: python scripts/probes/stream_k_probe.py OUT [fp16,bf16,fp32] [ROUNDS]

triton_tuned's stream-K tail (``Config.stream_k``) on the GPU.

1. Correctness: every stream-K candidate of ``configs.py`` at shapes whose
   tiles leave a tail on 132 SMs (odd K tails, transposed operands, one K
   step), C against a float64 product, the arrival counters back at 0 after
   every call, and C bit-identical over 5 calls.
2. Speed: each stream-K candidate beside the same config without it (128
   programs in whole rounds) and cuBLAS (torch.mm), in interleaved rounds
   (each round times every variant once, order rotated, 256 MB written
   between calls to flush L2), at the four large shapes (4096³, 8192³, 8192x14336x4096, 8192x4096x14336).
"""

import json
import os
import statistics
import sys
import time

import attrs
import torch
from gemmreg_plugins.triton_tuned import configs, launchers, stream_k
from gemmreg_plugins.triton_tuned.configs import _tiled

out = sys.argv[1]
dtypes = (sys.argv[2] if len(sys.argv) > 2 else "fp16,bf16,fp32").split(",")
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 60
sms = torch.cuda.get_device_properties(0).multi_processor_count
fallback = _tiled(128, 256, 64, 3, 8)
torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
report = {
    "device": torch.cuda.get_device_name(),
    "sms": sms,
    "rounds": rounds,
    "checks": [],
    "rows": [],
}


def listed(dt):
    return configs.CUDA_PERSISTENT_TMA_TF32 if dt == "fp32" else configs.CUDA_PERSISTENT_TMA


def operands(m, n, k, dt, layout, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch_dtype[dt])
    b = torch.randn(k, n, device="cuda", generator=g).to(torch_dtype[dt])
    if layout == "transposedA":
        a = a.T.contiguous().T
    if layout == "transposedB":
        b = b.T.contiguous().T
    return a, b


# 1. correctness
check_shapes = [
    (4096, 4096, 4096, "rowmajor"),
    (8192, 14336, 4096, "rowmajor"),
    (4224, 4096, 1000, "rowmajor"),  # 33x16 = 528 tiles: 4 whole rounds of 132, K tail of 40
    (3000, 5000, 776, "rowmajor"),  # tails on M and N
    (4096, 4608, 64, "rowmajor"),  # one K step: no tile is cut
    (4096, 4096, 2056, "transposedA"),
    (4096, 4096, 2056, "transposedB"),
]
for dt in dtypes:
    precision = "tf32" if dt == "fp32" else "ieee"
    torch.backends.cuda.matmul.allow_tf32 = False
    for config in (c for c in listed(dt) if c.stream_k):
        for m, n, k, layout in check_shapes:
            a, b = operands(m, n, k, dt, layout)
            tiles = -(-m // config.block_m) * -(-n // config.block_n)
            want = a.double() @ b.double()
            scale = (a.double().abs() @ b.double().abs()).max().item()
            row = dict(
                config=config.name,
                dtype=dt,
                shape=[m, n, k],
                layout=layout,
                tail=stream_k.tail_tiles(tiles, min(tiles, sms)),
            )
            try:
                launch = launchers.launcher(config, m, n, k, precision, sms, fallback=fallback)
                results = []
                for _ in range(5):
                    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch_dtype[dt])
                    launch(a, b, c)
                    torch.cuda.synchronize()
                    results.append(c)
                row["rel_err"] = ((results[0].double() - want).abs().max() / scale).item()
                row["bit_identical"] = all(torch.equal(results[0], r) for r in results[1:])
                row["counters_clean"] = all(
                    int(s.counters.abs().sum()) == 0 for s in stream_k.cached().values()
                )
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            print("check", json.dumps(row), flush=True)
            report["checks"].append(row)
            del a, b, want
    torch.cuda.empty_cache()

# 2. speed
shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336)]
for dt in dtypes:
    precision = "tf32" if dt == "fp32" else "ieee"
    sk = [c for c in listed(dt) if c.stream_k]
    variants = [v for c in sk for v in (c, attrs.evolve(c, stream_k=False))]
    for m, n, k in shapes:
        a, b = operands(m, n, k, dt, "rowmajor")
        torch.backends.cuda.matmul.allow_tf32 = dt == "fp32"
        calls = {"cublas": lambda a=a, b=b: torch.mm(a, b)}
        errors = {}
        for config in variants:
            try:
                launch = launchers.launcher(config, m, n, k, precision, sms, fallback=fallback)
                c = torch.empty((m, n), device="cuda", dtype=torch_dtype[dt])
                start = time.monotonic()
                launch(a, b, c)
                torch.cuda.synchronize()
                ref = torch.mm(a, b)
                err = ((c.double() - ref.double()).abs().max() / ref.double().abs().max()).item()
                if not err < 2e-2:
                    errors[config.name] = f"wrong C: rel err {err}"
                    continue
                calls[config.name] = lambda launch=launch, a=a, b=b, c=c: launch(a, b, c)
                print(f"  built {config.name} in {time.monotonic() - start:.1f} s", flush=True)
            except Exception as e:
                errors[config.name] = f"{type(e).__name__}: {str(e)[:300]}"
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
        base = times["cublas"]
        print(f"{dt} {m}x{n}x{k}: cublas median {statistics.median(base):.4f} ms", flush=True)
        table = []
        for nm in names[1:]:
            ratios = sorted(x / y for x, y in zip(base, times[nm]))
            q = len(ratios) // 4
            table.append(
                (
                    statistics.median(ratios),
                    ratios[q],
                    ratios[-q - 1],
                    nm,
                    statistics.median(times[nm]),
                )
            )
        for med, lo, hi, nm, ms in sorted(table, reverse=True):
            print(f"  {med:.4f}x (IQR {lo:.4f}-{hi:.4f}) {ms:.4f} ms  {nm}", flush=True)
        for nm, why in errors.items():
            print(f"  FAILED {nm}: {why}", flush=True)
        report["rows"].append(dict(dtype=dt, shape=[m, n, k], times=times, errors=errors))
        del a, b, calls
        torch.cuda.empty_cache()
json.dump(report, open(os.path.join(out, "sk_probe.json"), "w"))
