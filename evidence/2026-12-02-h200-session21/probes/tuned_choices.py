"""Session 21, on the CPU machine: what triton_tuned's tuner chose in each run,
read from the tuning caches the runs kept (GEMMREG_CACHE_DIR): per tuning,
the winner and the runner-up's ranking score over the winner's.

  python3 tuned_choices.py RUN_DIR...  > tuned-choices.txt
"""

import json
import sys

print(f"{'run':<4} {'shape':<16} {'dtype':<5} {'chosen':<48} runner-up/chosen")
for run in sys.argv[1:]:
    entries = json.load(open(f"{run}/cache/triton_tuned.json"))["entries"]
    for key, entry in sorted(entries.items()):
        shape, dtype = key.split("|")[:2]
        scores = entry["timings_ms"]
        ranked = sorted(scores, key=scores.get)
        margin = f"{scores[ranked[1]] / scores[ranked[0]]:.4f}" if len(ranked) > 1 else "-"
        print(f"{run:<4} {shape:<16} {dtype:<5} {ranked[0]:<48} {margin}")
