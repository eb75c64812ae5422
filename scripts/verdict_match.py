"""Do two saved runs of the same points give the same verdicts? Point by
point and pair by pair, the verdict each run recorded, and a count of how the
pairs agree: the same word, a different word that is no contradiction (one
run FASTER where the other is EQUIVALENT or INCONCLUSIVE: a ratio near the
margin, within noise), or a contradiction (FASTER in one, SLOWER in the
other). This is how the multi-GPU evidence says a sharded run answers as a
one-GPU run does, never by hand.

    python scripts/verdict_match.py RUN_A RUN_B

Exit status: 0 when no pair contradicts, 1 when one does, 2 on bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

CLAIMS = {"faster", "slower"}


def verdicts_of(path: Path) -> dict[tuple[str, str], tuple[str, float | None]]:
    from gemmreg.reporting import runs

    _, reports, _ = runs.load_run(path)
    found = {}
    for report in reports:
        point = f"{report.problem.shape} {report.problem.dtype} {report.problem.layout}"
        for v in report.verdicts:
            found[(point, f"{v.kernel} vs {v.baseline}")] = (v.verdict, v.speedup)
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python scripts/verdict_match.py RUN_A RUN_B", file=sys.stderr)
        return 2
    from gemmreg.reporting.runs import RunError

    try:
        first, second = (verdicts_of(Path(p)) for p in argv)
    except RunError as error:
        print(f"verdict_match: {error}", file=sys.stderr)
        return 2
    same = differ = contradict = 0
    for key in sorted(set(first) | set(second)):
        a, b = first.get(key, ("absent", None)), second.get(key, ("absent", None))
        if a[0] == b[0]:
            same += 1
            continue
        clash = {a[0], b[0]} == CLAIMS
        contradict += clash
        differ += not clash
        ratios = " / ".join("-" if r is None else f"{r:.4g}x" for r in (a[1], b[1]))
        tag = "CONTRADICTION" if clash else "differs"
        print(f"{tag}: {key[0]}: {key[1]}: {a[0]} / {b[0]} ({ratios})")
    total = same + differ + contradict
    print(
        f"{total} pairs: {same} the same verdict, {differ} a different verdict that is no "
        f"contradiction, {contradict} contradictions (FASTER in one run, SLOWER in the other)"
    )
    return 1 if contradict else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
