"""Run on an H200: python scripts/probes/gluon_probe.py OUT fp16,bf16 ROUNDS SHAPES

A probe of triton_tuned's ``gluon_ws`` kernel (a warp-specialised
persistent GEMM in Gluon, ``plugins/triton_tuned/gluon_ws.py``) beside cuBLAS
(torch.mm) and triton_tuned's usual winner (128x256x64-s3-w8-g8-flat), at the
four large shapes (4096³, 8192³, 8192x14336x4096, 8192x4096x14336).

It takes the kernel as it is now and as it was at commit 05ecee9, whose
wheels ran it for ``evidence/2026-12-02-h200-gluon-warp-specialised/p4``:
05ecee9's kernel takes ``PINGPONG`` (its descriptors the ping-pong flag), and
all six variants run; the landed one has no ping-pong form and takes
``B_TRANSPOSED`` instead (its descriptors ``b_t``): the three cooperative
variants run, B row-major, and the ping-pong ones are listed as left out.

Each Gluon variant is first checked at every point in a subprocess of its
own with a time limit (a producer/consumer kernel that deadlocks must not
take the probe down), all side by side; only those that finish and agree
with torch.mm are timed. Each round times every variant once, order rotated
and reversed every other pass, 256 MB written between calls to flush L2.

  python3 gluon_probe.py OUT fp16,bf16 ROUNDS SHAPES
  python3 gluon_probe.py --check INDEX fp16,bf16 SHAPES
"""

import json
import os
import statistics
import subprocess
import sys
import time

import torch

from gemmreg_plugins.triton_tuned import gluon_ws, launchers

try:  # the config constructors moved from configs to config_lists after 05ecee9
    from gemmreg_plugins.triton_tuned.config_lists import _tiled, _tma
except ImportError:
    from gemmreg_plugins.triton_tuned.configs import _tiled, _tma

PINGPONG_KERNEL = "PINGPONG" in gluon_ws.gemm_gluon_ws.arg_names  # 05ecee9's kernel
torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}
GLUON = [  # (BLOCK_M, BLOCK_N, BLOCK_K, stages, GROUP_M, ping-pong)
    (128, 256, 64, 3, 8, False),
    (256, 128, 64, 3, 8, False),
    (128, 256, 64, 3, 16, False),
    (128, 128, 64, 5, 8, True),
    (128, 128, 64, 4, 8, True),
    (128, 128, 64, 5, 16, True),
]


def gluon_name(v):
    return "gluon-ws:{}x{}x{}-s{}-g{}".format(*v[:5]) + ("-pingpong" if v[5] else "-coop")


def variants_here():
    """The variants this kernel has: every one on 05ecee9's, the cooperative ones on the landed kernel."""
    return [v for v in GLUON if PINGPONG_KERNEL or not v[5]]


def gluon_launch(v, m, n, k, sms):
    bm, bn, bk, stages, group_m, pingpong = v
    tiles = -(-m // bm) * -(-n // bn)
    programs = launchers.persistent_programs(tiles, sms)

    def launch(a, b, c):
        if PINGPONG_KERNEL:
            descs = gluon_ws.descriptors(a, b, c, bm, bn, bk, pingpong)
            form = {"PINGPONG": pingpong}
        else:  # B row-major here, never a transposed view
            descs = gluon_ws.descriptors(a, b, c, bm, bn, bk, b_t=False)
            form = {"B_TRANSPOSED": False}
        return gluon_ws.gemm_gluon_ws[(programs,)](*descs, m, n, k, GROUP_M=group_m,
                                                   PROGRAMS=programs, STAGES=stages,
                                                   num_warps=4, **form)  # fmt: skip

    return launch


def operands(dt, m, n, k):
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch_dtype[dt])
    b = torch.randn(k, n, device="cuda", generator=g).to(torch_dtype[dt])
    return a, b


def rel_err(c, a, b):
    ref = torch.mm(a, b).double()
    return ((c.double() - ref).abs().max() / ref.abs().max()).item()


def main(argv):
    checking = argv[0] == "--check"
    args = argv[1:] if checking else argv
    out, dtypes, shape_arg = args[0], args[1].split(","), args[-1]
    rounds = 0 if checking else int(args[2])
    shapes = [tuple(int(x) for x in s.split("x")) for s in shape_arg.split(",")]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    base = _tma(128, 256, 64, 3, 8, flatten=True)
    variants = variants_here()
    if checking:
        v = variants[int(out)]
        for dt in dtypes:
            for m, n, k in [*shapes, (1000, 1096, 328), (200, 520, 4096)]:  # ragged edges (TMA strides: 16 bytes)
                a, b = operands(dt, m, n, k)
                c = torch.full((m, n), float("nan"), device="cuda", dtype=torch_dtype[dt])
                for _ in range(3):
                    gluon_launch(v, m, n, k, sms)(a, b, c)
                    torch.cuda.synchronize()
                    err = rel_err(c, a, b)
                    print(f"  {gluon_name(v)} {dt} {m}x{n}x{k}: rel err {err:.3g}", flush=True)
                    if not err < 1e-2:
                        sys.exit(1)
        sys.exit(0)

    for v in GLUON:
        if v not in variants:
            print(f"left out: {gluon_name(v)} (this kernel has no ping-pong form)", flush=True)
    procs = [subprocess.Popen([sys.executable, __file__, "--check", str(i), ",".join(dtypes), shape_arg],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(len(variants))]  # fmt: skip
    deadline = time.monotonic() + 150
    usable = []
    for v, proc in zip(variants, procs, strict=True):
        try:
            text = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))[0]
            verdict = f"exit {proc.returncode}"
        except subprocess.TimeoutExpired:
            proc.kill()
            text = proc.communicate()[0]
            verdict = "TIMED OUT"
        with open(os.path.join(out, f"check-{gluon_name(v)}.log"), "w") as f:
            f.write(text)
        tail = " | ".join(text.strip().splitlines()[-2:])
        print(f"check {gluon_name(v)}: {verdict}; {tail}", flush=True)
        if proc.returncode == 0:
            usable.append(v)

    flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
    report = {"device": torch.cuda.get_device_name(), "sms": sms, "rounds": rounds, "rows": []}
    for dt in dtypes:
        for m, n, k in shapes:
            a, b = operands(dt, m, n, k)
            calls = {"cublas": lambda a=a, b=b: torch.mm(a, b)}
            fallback = _tiled(128, 256, 64, 3, 8)
            builds = [(base.name, launchers.launcher(base, m, n, k, "ieee", sms, fallback=fallback))]
            builds += [(gluon_name(v), gluon_launch(v, m, n, k, sms)) for v in usable]
            for name, launch in builds:
                c = torch.empty((m, n), device="cuda", dtype=torch_dtype[dt])
                launch(a, b, c)
                torch.cuda.synchronize()
                calls[name] = lambda launch=launch, a=a, b=b, c=c: launch(a, b, c)
            names = list(calls)
            for f in calls.values():
                for _ in range(3):
                    f()
            torch.cuda.synchronize()
            times = {nm: [] for nm in names}
            events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                      for _ in names]  # fmt: skip
            for r in range(rounds):
                order = names[r % len(names) :] + names[: r % len(names)]
                if (r // len(names)) % 2:
                    order.reverse()
                for nm, (e0, e1) in zip(order, events, strict=True):
                    flush.zero_()
                    e0.record()
                    calls[nm]()
                    e1.record()
                torch.cuda.synchronize()
                for nm, (e0, e1) in zip(order, events, strict=True):
                    times[nm].append(e0.elapsed_time(e1))
            cub = times["cublas"]
            print(f"{dt} {m}x{n}x{k}: cublas median {statistics.median(cub):.4f} ms", flush=True)
            table = []
            for nm in names[1:]:
                ratios = sorted(x / y for x, y in zip(cub, times[nm], strict=True))
                q = len(ratios) // 4
                table.append((statistics.median(ratios), ratios[q], ratios[-q - 1], nm,
                              statistics.median(times[nm])))  # fmt: skip
            for med, lo, hi, nm, ms in sorted(table, reverse=True):
                print(f"  {med:.4f}x (IQR {lo:.4f}-{hi:.4f}) {ms:.4f} ms  {nm}", flush=True)
            report["rows"].append(dict(dtype=dt, shape=[m, n, k], times=times))
            with open(os.path.join(out, "gluon_probe.json"), "w") as f:
                json.dump(report, f)
            del a, b, calls
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:])
