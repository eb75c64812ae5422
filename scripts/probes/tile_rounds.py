"""torch.mm beside 128 x 128 tile variants at the two Llama 3 8B points where
cuBLAS leads every kernel of triton_tuned (2048x1024x4096 and
128x14336x4096, B a transposed view of the weight), bf16 and fp16, in
interleaved rounds on gemmreg's own clock (``ranked_rounds.report``).

Run on a GPU machine (gemmreg and its plugins installed), from the
repository root::

    python scripts/probes/tile_rounds.py ROUNDS OUT.json [--points MxNxK,...]
        [--dtypes bf16,fp16] [--extra CONFIG,...]

``--extra`` adds configs by name (``Config.from_name``: split-K, stream-K,
pieces) to the variants below; ``--points`` and ``--dtypes`` narrow the
rounds, so that a probe fits one device command.

Why: a one-process probe's five clocks (``scripts/probe_decode_kernels.py``)
moved by as much between two runs as the gaps between the leading configs
there; rounds that time every variant once each, in a rotated order, tell
a 1% gap apart. The variants: the persistent TMA kernel's 128 x 128 x 64
tile at 4 to 6 stages and 4 or 8 warps, the Gluon kernel's at 4 to 6
stages, and the TMA split-K path's unsplit tiles. Every C is checked
against ``a @ b`` first (``ranked_rounds.agrees``); a config that is wrong
or fails is listed as refused, not timed.
"""

import argparse
import json
import sys

sys.path.insert(0, "scripts/probes")
import gemmreg  # noqa: F401  (first: gemmreg decides the backend before triton is imported)
import torch
from gemmreg_plugins.triton_tuned import launchers
from gemmreg_plugins.triton_tuned.launch_config import Config
from ranked_rounds import agrees, report

NAMES = [
    "persistent_tma:128x128x64-s4-w8-flat", "persistent_tma:128x128x64-s5-w8-split",
    "persistent_tma:128x128x64-s6-w8-split", "persistent_tma:128x128x64-s5-w4-split",
    "persistent_tma:128x128x64-s6-w4-split", "persistent_tma:128x128x64-s4-w4-split",
    "gluon_ws:128x128x64-s4-w4", "gluon_ws:128x128x64-s5-w4", "gluon_ws:128x128x64-s6-w4",
    "tma_split_k:128x128x128-s3-w8-k1", "tma_split_k:128x128x64-s5-w8-k1",
]  # fmt: skip
parser = argparse.ArgumentParser()
parser.add_argument("rounds", type=int)
parser.add_argument("out")
parser.add_argument("--points", default="2048x1024x4096,128x14336x4096")
parser.add_argument("--dtypes", default="bf16,fp16")
parser.add_argument("--extra", default="")
args = parser.parse_args()
args.samples, args.top = 20, 20
NAMES += [name for name in args.extra.split(",") if name]
POINTS = [tuple(int(d) for d in point.split("x")) for point in args.points.split(",")]
DTYPES = [{"bf16": torch.bfloat16, "fp16": torch.float16}[d] for d in args.dtypes.split(",")]
sms = torch.cuda.get_device_properties(0).multi_processor_count
fb = Config.from_name("tiled:128x128x64-s4-w4")
found = []
print(torch.cuda.get_device_name(), flush=True)
for dt in DTYPES:
    for m, n, k in POINTS:
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(n, k, device="cuda", dtype=dt).t()
        ref = a @ b
        mm_out = torch.empty_like(ref)
        calls = {"torch.mm": lambda a=a, b=b, o=mm_out: torch.mm(a, b, out=o)}
        refused: dict[str, str] = {}
        for name in NAMES:
            try:
                out = torch.empty_like(ref)
                L = launchers.launcher(Config.from_name(name), m, n, k, "tf32", sms, fallback=fb)
                L(a, b, out)
                torch.cuda.synchronize()
                if not agrees(out, ref):
                    refused[name] = "wrong"
                    continue
                calls[name] = lambda L=L, a=a, b=b, out=out: L(a, b, out)
            except Exception as e:
                refused[name] = f"{type(e).__name__}: {str(e)[:120]}"
        found.append(report(f"{m}x{n}x{k} {dt}", "torch.mm", calls, refused, args))
        for name, why in refused.items():
            print("  refused", name, why)
with open(args.out, "w") as file:
    json.dump(found, file)
