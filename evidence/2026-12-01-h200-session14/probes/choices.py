"""Session-14 probe: which config triton_tuned's tuner picks at issue 16's
four shapes (fp16, bf16), as ``prepare`` would, and every candidate's score
from the tuning cache it writes (``$GEMMREG_CACHE_DIR/triton_tuned.json``).

  GEMMREG_CACHE_DIR=DIR python3 choices.py
"""

import json

import gemmreg
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import tuning_cache

where = gemmreg.where()
for dtype in ("fp16", "bf16"):
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336)]:
        choice, _, _ = triton_tuned.choose(gemmreg.Problem(m=m, n=n, k=k, dtype=dtype), where)
        print(f"{dtype} {m}x{n}x{k}: {choice.best.name} ({choice.origin})", flush=True)
data = json.load(open(tuning_cache.cache_path()))
for key, entry in data["entries"].items():
    print(key.split("|src-")[0])
    for name, score in sorted(entry.get("timings_ms", {}).items(), key=lambda item: item[1]):
        print(f"  {score:.4f}  {name}")
    for name, why in entry.get("skipped", {}).items():
        print(f"  skipped {name}: {why}")
