"""Session 17: process_spread_probe.py's trials with and without each
experiment's first trial (which follows freeing and allocating GiBs: both
kernels ran 10-13% slow in it where it did), read from its JSON files.

  python3 process_spread_summary.py JSON...
"""

import json
import sys

for path in sys.argv[1:]:
    with open(path) as fh:
        report = json.load(fh)
    print(f"{report['shape']} {report['dtype']} ({path})")
    for experiment in ("adjacent", "spaced", "workspace", "flush"):
        rows = report[experiment]
        parts = []
        for name in ("splitk", "cublas"):
            meds = [r[name] for r in rows]
            later = meds[1:]
            parts.append(
                f"{name} all {max(meds) / min(meds) - 1:.1%}, "
                f"first trial {meds[0]:.2f} us, later ones {min(later):.2f}-{max(later):.2f} us "
                f"({max(later) / min(later) - 1:.1%})"
            )
        print(f"  {experiment:9s}: " + " | ".join(parts))
