"""Tally the verdicts of many saved runs, point by point and pair by pair:
how often each verdict came out, and the range of the speedups. This is how
the A/A false-claim rate and the known-difference detection rate in the
evidence READMEs are counted, never by hand.

    python scripts/verdict_tally.py RUN_DIR... [--margin PCT]

Each line also gives the spread of the processes: the standard deviation of
their paired end-to-end log-ratios, in percent, as the median over the runs
and its range (what makes an interval wide at small sizes).

``--margin`` judges each run again from its recorded processes with that
equivalence margin and today's rules (as ``gemmreg report --margin``); without
it the verdicts are the ones the runs recorded.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--margin", type=float, default=None)
    args = parser.parse_args(argv)

    from gemmreg.reporting import runs
    from gemmreg.timing import verdicts

    words: dict[tuple[str, str], list[str]] = defaultdict(list)
    speedups: dict[tuple[str, str], list[float]] = defaultdict(list)
    spreads: dict[tuple[str, str], list[float]] = defaultdict(list)
    for path in args.runs:
        _, reports, partial = runs.load_run(path)
        for report in reports:
            judged = report.verdicts
            if args.margin is not None and report.records:
                judged = verdicts.all_verdicts(
                    report.summaries,
                    report.records,
                    confidence=report.confidence,
                    margin=args.margin / 100,
                )
            for v in judged:
                key = (
                    f"{report.problem.shape} {report.problem.dtype}",
                    f"{v.kernel} vs {v.baseline}",
                )
                words[key].append("partial" if partial and report.partial else v.verdict)
                if v.speedup is not None:
                    speedups[key].append(v.speedup)
                pair = f"{v.baseline}|{v.kernel}"
                ratios = [
                    r.log_ratios["end-to-end"][pair]
                    for r in report.records
                    if pair in r.log_ratios.get("end-to-end", {})
                ]
                if len(ratios) >= 2:
                    spreads[key].append(100 * statistics.stdev(ratios))
    rule = "as recorded" if args.margin is None else f"judged again, margin +-{args.margin:g}%"
    print(f"{len(args.runs)} runs, verdicts {rule}")
    for key in sorted(words):
        counts = ", ".join(f"{w.upper()} {words[key].count(w)}" for w in sorted(set(words[key])))
        s = speedups[key]
        spread = f"; speedup {min(s):.4g}x to {max(s):.4g}x" if s else ""
        sd = spreads[key]
        if sd:
            spread += f"; process sd {statistics.median(sd):.2f}% ({min(sd):.2f} to {max(sd):.2f})"
        print(f"  {key[0]:22s} {key[1]:28s} {len(words[key]):3d} runs: {counts}{spread}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
