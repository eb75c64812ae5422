"""Session-20 probe: does Triton 3.6's Hopper warp specialisation (one
producer warpgroup loading by TMA, two consumer warpgroups sharing each tile,
``tl.range(..., warp_specialize=True)`` with ``num_warps=4``) beat
triton_tuned's usual winner (128x256x64-s3-w8-g8-flat) and cuBLAS?

Compiled here for sm_90 with Triton 3.6 first (``/tmp/probe/wsk.py``): with
``num_warps=8`` the pass returns at once (session 18's same binaries), and
with 4 it makes 12 warps, ``setmaxnreg`` 232 for the consumers, but only for
a C store through pointers or an in-kernel descriptor (a host descriptor's
block cannot be split between the consumers: "descriptor block and tensor
types must match"), and never for a split store.

The first H200 run of this probe hung (killed by its 200 s timeout with
nothing printed), so each WS variant is first built and checked at every
point in a subprocess of its own with a time limit (``check`` below), and
only those that finish in time are timed.

Each round times every variant once, order rotated and reversed every other
pass, 256 MB written between calls to flush L2 (as session 19's variants.py).

  python3 ws_probe.py OUT fp16,bf16 ROUNDS SHAPES
  python3 ws_probe.py --check INDEX fp16,bf16 SHAPES   (one WS variant)
"""

import json
import os
import statistics
import subprocess
import sys
import time

import torch
import triton
import triton.language as tl
from gemmreg_plugins.triton_tuned import launchers
from gemmreg_plugins.triton_tuned.configs import _tiled, _tma


@triton.jit
def gemm_ws(a_desc, b_desc, c_ptr, m, n, k, stride_cm, BLOCK_M: tl.constexpr,
            BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
            PROGRAMS: tl.constexpr, DESC_STORE: tl.constexpr):  # fmt: skip
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(m, BLOCK_M)
    tiles_n = tl.cdiv(n, BLOCK_N)
    k_tiles = tl.cdiv(k, BLOCK_K)
    tiles_per_group = GROUP_M * tiles_n
    for tile in tl.range(pid, tiles_m * tiles_n, PROGRAMS, warp_specialize=True):
        first_m = (tile // tiles_per_group) * GROUP_M
        rows = tl.minimum(tiles_m - first_m, GROUP_M)
        off_m = (first_m + (tile % tiles_per_group) % rows) * BLOCK_M
        off_n = ((tile % tiles_per_group) // rows) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(k_tiles):
            a = a_desc.load([off_m, kk * BLOCK_K])
            b = b_desc.load([kk * BLOCK_K, off_n])
            acc = tl.dot(a, b, acc)
        c = acc.to(c_ptr.dtype.element_ty)
        if DESC_STORE:
            c_desc = tl.make_tensor_descriptor(c_ptr, [m, n], [stride_cm, 1], [BLOCK_M, BLOCK_N])
            c_desc.store([off_m, off_n], c)
        else:
            offs_m = (off_m + tl.arange(0, BLOCK_M)).to(tl.int64)
            offs_n = (off_n + tl.arange(0, BLOCK_N)).to(tl.int64)
            mask = (offs_m[:, None] < m) & (offs_n[None, :] < n)
            tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], c, mask=mask)


def ws_launch(bm, bn, bk, stages, desc, m, n, k, sms):
    from triton.tools.tensor_descriptor import TensorDescriptor

    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    programs = launchers.persistent_programs(tiles, sms)

    def launch(a, b, c):
        a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
        b_desc = TensorDescriptor.from_tensor(b, [bk, bn])
        return gemm_ws[(programs,)](a_desc, b_desc, c, m, n, k, c.stride(0), BLOCK_M=bm,
                                    BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, PROGRAMS=programs,
                                    DESC_STORE=desc, num_warps=4, num_stages=stages)  # fmt: skip

    return launch


scratch = {}


def allocator(size, alignment, stream):
    if size not in scratch:
        scratch[size] = torch.empty(size, dtype=torch.int8, device="cuda")
    return scratch[size]


triton.set_allocator(allocator)
checking = sys.argv[1] == "--check"
args = (
    sys.argv[2:] if checking else sys.argv[1:]
)  # --check INDEX DTYPES SHAPES | OUT DTYPES ROUNDS SHAPES
out = args[0]
dtypes = args[1].split(",")
rounds = 0 if checking else int(args[2])
shape_arg = args[-1]
shapes = [tuple(int(x) for x in s.split("x")) for s in shape_arg.split(",")]
sms = torch.cuda.get_device_properties(0).multi_processor_count
torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}
flush = torch.empty(256 * 2**20, dtype=torch.int8, device="cuda")
base = _tma(128, 256, 64, 3, 8, flatten=True)
WS = [  # (BLOCK_M, BLOCK_N, BLOCK_K, stages, C through an in-kernel descriptor)
    (128, 256, 64, 3, False),
    (128, 256, 64, 4, False),
    (128, 256, 64, 3, True),
    (256, 128, 64, 3, False),
    (256, 128, 64, 4, False),
    (256, 128, 64, 3, True),
    (128, 128, 64, 5, True),
]


def ws_name(v):
    return "ws:{}x{}x{}-s{}-w4x3-{}".format(*v[:4], "desc" if v[4] else "ptr")


def check(index):
    """Build WS variant ``index`` and check it at every point, printing as it goes."""
    v = WS[index]
    for dt in dtypes:
        for m, n, k in shapes:
            g = torch.Generator(device="cuda").manual_seed(0)
            a = torch.randn(m, k, device="cuda", generator=g).to(torch_dtype[dt])
            b = torch.randn(k, n, device="cuda", generator=g).to(torch_dtype[dt])
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch_dtype[dt])
            print(f"  {ws_name(v)} {dt} {m}x{n}x{k}: launching", flush=True)
            ws_launch(*v, m, n, k, sms)(a, b, c)
            torch.cuda.synchronize()
            ref = torch.mm(a, b).double()
            err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
            print(f"  {ws_name(v)} {dt} {m}x{n}x{k}: rel err {err:.3g}", flush=True)
            if not err < 2e-2:
                sys.exit(1)


def timed_rounds(calls, rounds):
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
    return times


if checking:
    check(int(out))
    sys.exit(0)
# The checks run side by side (correctness only; nothing is timed until they end).
procs = [subprocess.Popen([sys.executable, __file__, "--check", str(i), ",".join(dtypes), shape_arg],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
         for i in range(len(WS))]  # fmt: skip
deadline = time.monotonic() + 120
usable = []
for v, proc in zip(WS, procs, strict=True):
    try:
        text = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))[0]
        verdict = f"exit {proc.returncode}"
    except subprocess.TimeoutExpired:
        proc.kill()
        text = proc.communicate()[0]
        verdict = "TIMED OUT (120 s)"
    tail = " | ".join(text.strip().splitlines()[-2:])
    print(f"check {ws_name(v)}: {verdict}; {tail}", flush=True)
    if proc.returncode == 0:
        usable.append(v)


report = {"device": torch.cuda.get_device_name(), "sms": sms, "rounds": rounds, "rows": []}
for dt in dtypes:
    for m, n, k in shapes:
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(m, k, device="cuda", generator=g).to(torch_dtype[dt])
        b = torch.randn(k, n, device="cuda", generator=g).to(torch_dtype[dt])
        ref = torch.mm(a, b).double()
        calls = {"cublas": lambda a=a, b=b: torch.mm(a, b)}
        errors = {}
        builds = [(base.name, lambda: launchers.launcher(base, m, n, k, "ieee", sms,
                                                         fallback=_tiled(128, 256, 64, 3, 8)))]  # fmt: skip
        for v in usable:
            builds.append((ws_name(v), lambda v=v: ws_launch(*v, m, n, k, sms)))
        for name, build in builds:
            try:
                start = time.monotonic()
                launch = build()
                c = torch.empty((m, n), device="cuda", dtype=torch_dtype[dt])
                for _ in range(3):
                    c.fill_(float("nan"))
                    launch(a, b, c)
                    torch.cuda.synchronize()
                    err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
                    if not err < 2e-2:
                        break
                if not err < 2e-2:
                    errors[name] = f"wrong C: rel err {err}"
                    continue
                calls[name] = lambda launch=launch, a=a, b=b, c=c: launch(a, b, c)
                print(f"  built {name} in {time.monotonic() - start:.1f} s", flush=True)
            except Exception as e:
                errors[name] = f"{type(e).__name__}: {str(e)[:300]}"
        del ref
        times = timed_rounds(calls, rounds)
        cub = times["cublas"]
        print(f"{dt} {m}x{n}x{k}: cublas median {statistics.median(cub):.4f} ms", flush=True)
        table = []
        for nm in list(calls)[1:]:
            ratios = sorted(x / y for x, y in zip(cub, times[nm]))
            q = len(ratios) // 4
            table.append((statistics.median(ratios), ratios[q], ratios[-q - 1], nm,
                          statistics.median(times[nm])))  # fmt: skip
        for med, lo, hi, nm, ms in sorted(table, reverse=True):
            print(f"  {med:.4f}x (IQR {lo:.4f}-{hi:.4f}) {ms:.4f} ms  {nm}", flush=True)
        for nm, why in errors.items():
            print(f"  FAILED {nm}: {why}", flush=True)
        report["rows"].append(dict(dtype=dt, shape=[m, n, k], times=times, errors=errors))
        json.dump(report, open(os.path.join(out, "ws_probe.json"), "w"))
        del a, b, calls
        torch.cuda.empty_cache()
