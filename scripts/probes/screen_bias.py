"""Run on any machine: python scripts/probes/screen_bias.py CACHE_JSON > screen-bias.txt

The screening round's first-place bias, read from a tuning cache written on
the H200 by triton_tuned's tuner of f70edc5/7048cc9 (screening in list
order, then ranked rounds; the cache it read is in git history at efbe4d9).

For every tuning: each ranked candidate's screening time over its ranking
score (both ms). Equal conditions would give every candidate the same
ratio; the first candidate of the list (screened first, straight after the
candidates were compiled and checked) is set against the median of the rest,
and the persistent candidates screening dropped are listed with their
screening time over the fastest's (the cut was 1.15).
"""

import json
import statistics
import sys

entries = json.load(open(sys.argv[1]))["entries"]
for key, entry in entries.items():
    screened, scored = entry["screened_ms"], entry["timings_ms"]
    persistent = [n for n in screened if n.startswith("persistent")]
    ratios = {n: screened[n] / scored[n] for n in scored}
    first = "persistent_tma:128x256x64-s3-w8-g8-flat"  # configs.CUDA_PERSISTENT_TMA[0]
    rest = statistics.median(r for n, r in ratios.items() if n != first)
    fastest = min(screened.values())
    dropped = sorted(
        (round(screened[n] / fastest, 3), n.split(":")[1])
        for n in persistent
        if n not in scored
    )
    shape, dtype = key.split("|")[:2]
    line = f"{shape:16s} {dtype}  first {ratios.get(first, float('nan')):.3f}  others (median) {rest:.3f}"
    print(f"{line}  first/others {ratios.get(first, float('nan')) / rest:.3f}")
    print(f"    ranked best: {min(scored, key=scored.__getitem__).split(':')[1]}; "
          f"first's place in the ranking: {sorted(scored, key=scored.__getitem__).index(first) + 1} of {len(scored)}")
    print(f"    persistent candidates not ranked (screening time over the fastest's): {dropped}")
