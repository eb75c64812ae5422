"""Run from the repository root of a checkout of efbe4d9: python scripts/probes/tuner_bias.py > tuner-bias.txt

Read every tuning cache committed under evidence/ at that commit
(``evidence/*/**/cache/triton_tuned.json``, written by ``triton_tuned``'s
tuner on the H200, Triton 3.6; later commits keep only the result) and
print, per tuning of one shape and dtype: where its winner stood in the
candidate list, and how far apart the tuner put the two pairs of candidates
that compile to the same binary under Triton 3.6 (``same_binary.py``: ``ws``
changes nothing there).
"""

import glob
import json
import statistics

from gemmreg_plugins.triton_tuned import configs
from gemmreg_plugins.triton_tuned.launch_config import Config

TWINS = [
    ("persistent_tma:128x256x64-s3-w8-g8-flat", "persistent_tma:128x256x64-s3-w8-g8-flat-ws"),
    (
        "persistent_tma:128x256x64-s4-w8-g8-flat-split",
        "persistent_tma:128x256x64-s4-w8-g8-flat-ws-split",
    ),
]

positions, gaps = [], {pair: [] for pair in TWINS}
print("cache | shape dtype | winner (its place among the candidates timed) | twin gaps")
for path in sorted(glob.glob("evidence/*/**/cache/triton_tuned.json", recursive=True)):
    entries = json.load(open(path)).get("entries", {})
    for key, entry in entries.items():
        shape, dtype, _, _, _, triton = key.split("|")[:6]
        timings = entry.get("timings_ms") or {}
        if triton != "triton-3.6.0" or not timings:
            continue
        m, n, k = (int(x) for x in shape.split("x"))
        order = [c.name for c in configs.candidates("cuda", dtype, m, n, k, tma=True)]
        timed = [name for name in order if name in timings]
        best = Config.from_dict(entry["best"]).name
        place = timed.index(best) + 1
        twin = []
        for first, second in TWINS:
            if first in timings and second in timings:
                gap = timings[second] / timings[first] - 1
                gaps[(first, second)].append(gap)
                twin.append(f"{second.split(':')[1]} {gap:+.2%}")
        if configs.TUNE_MIN_VOLUME <= m * n * k and dtype != "fp32" and timed[0].startswith("persistent"):
            positions.append(place)
        print(f"{path.split('/')[1]}/{path.split('/')[2]} | {shape} {dtype} | {best} ({place} of {len(timed)}) | {'; '.join(twin)}")
print()
print(f"16-bit tunings whose list starts with the persistent candidates: {len(positions)}; "
      f"won by the first candidate: {positions.count(1)}")
for (first, second), found in gaps.items():
    where = [
        configs.CUDA_PERSISTENT_TMA.index(c) + 1
        for c in configs.CUDA_PERSISTENT_TMA
        if c.name in (first, second)
    ]
    print(
        f"{second.split(':')[1]} (list places {where[0]} and {where[1]}) against its twin "
        f"{first.split(':')[1]}, the same binary: {len(found)} tunings, gap median "
        f"{statistics.median(found):+.2%}, range {min(found):+.2%} to {max(found):+.2%}, "
        f"the later twin slower in {sum(g > 0 for g in found)}"
    )
