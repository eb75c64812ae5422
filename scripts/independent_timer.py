"""Cross-check gemmreg's figures with an independent timer, so that
a verdict does not rest on gemmreg's clock alone: Triton's ``do_bench_cudagraph`` times each kernel's
launch, on gemmreg's own operands, in one process, kernels alternated.

    python scripts/independent_timer.py RUN_DIR [--reps-ms 500] [--rounds 5]

RUN_DIR is a saved ``gemmreg compare --out`` run on a GPU; for each kernel of
each point the script prints its median over rounds of ``do_bench_cudagraph``
(CUDA-graph replay, so launch overhead excluded) beside gemmreg's graph-replay
and end-to-end figures, and the ratio of the two kernels' figures by each
timer. Agreement means the ratios by both timers agree within 2%: absolute
times differ by design (gemmreg flushes L2 before every end-to-end sample).
GPU only; it imports the plugins as gemmreg does (entry points, plus
``GEMMREG_EXTRA_PLUGINS``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--reps-ms", type=float, default=500.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    import torch
    import triton.testing
    from gemmreg.checking.output_check import GuardedOutput, make_operands
    from gemmreg.discovery import registry, torch_state
    from gemmreg.reporting import runs

    if not torch.cuda.is_available():
        print("independent_timer: needs a GPU", file=sys.stderr)
        return 2
    _, reports, _ = runs.load_run(args.run)
    found = registry.discover()
    for report in reports:
        problem = report.problem
        timed = [s for s in report.summaries if s.status == "timed"]
        calls = {}
        for summary in timed:
            spec = found.get(summary.kernel).spec
            torch_state.pin()
            a, b = make_operands(spec, problem, report.seed, "cuda")
            out = GuardedOutput.allocate(problem, "cuda").out
            launch = spec.prepare(problem)
            calls[summary.kernel] = lambda launch=launch, a=a, b=b, out=out: launch(a, b, out)
        figures: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(args.rounds):  # alternated, as gemmreg's rounds are
            for name, call in calls.items():
                figures[name].append(triton.testing.do_bench_cudagraph(call, rep=args.reps_ms))
        print(f"{problem.shape} {problem.dtype}:")
        medians = {name: statistics.median(values) for name, values in figures.items()}
        for summary in timed:
            print(
                f"  {summary.kernel:24s} do_bench_cudagraph {medians[summary.kernel]:.5g} ms"
                f"   gemmreg graph {summary.regime_ms.get('graph replay', float('nan')):.5g} ms"
                f"   gemmreg end-to-end {summary.center_ms:.5g} ms"
            )
        if len(timed) >= 2:
            base, other = timed[0], timed[1]
            independent = medians[base.kernel] / medians[other.kernel]
            verdict = next(
                (
                    v
                    for v in report.verdicts
                    if (v.baseline, v.kernel) == (base.kernel, other.kernel)
                ),
                None,
            )
            graph = (
                next((r for r in verdict.regimes if r.regime == "graph replay"), None)
                if verdict
                else None
            )
            print(
                f"  speedup {other.kernel} vs {base.kernel}: do_bench_cudagraph {independent:.4g}x"
                + (
                    f", gemmreg graph replay {graph.estimate:.4g}x"
                    if graph and graph.estimate
                    else ""
                )
                + (
                    f", gemmreg end-to-end {verdict.speedup:.4g}x"
                    if verdict and verdict.speedup
                    else ""
                )
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
