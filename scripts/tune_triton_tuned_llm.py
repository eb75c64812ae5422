"""Tune triton_tuned at the LLM projection shapes, then bench it against cuBLAS.

One command on a GPU machine (the repository installed, e.g. by
``scripts/bootstrap.sh``)::

    python scripts/tune_triton_tuned_llm.py --out "$OUT"

1. **Tune**: for every point of the shapes file (default
   ``examples/shapes/llm-projections.yaml``, bf16; ``--dtype fp16`` rewrites
   its dtype), ``triton_tuned.choose`` picks the config as ``prepare`` does
   (the plugin's own tuner: every candidate checked, screened, ranked in
   interleaved rounds), with ``GEMMREG_CACHE_DIR`` and ``TRITON_CACHE_DIR``
   under ``OUT/tuning`` and a forced retune. Writes
   ``OUT/tuning/triton_tuned.json`` (the tuner's cache: every candidate's
   scores and skip reasons) and ``OUT/choices.json`` / ``choices.txt`` (per
   point: the dispatch family, the candidates, the winner, its path, the
   tuning time, and the winner's time beside ``torch.mm``'s on the same
   operands: a quick estimate of where each point stands, not a verdict),
   and prints the table.
2. **Bench**: ``gemmreg bench torch_ref triton_tuned --shapes FILE
   --processes 5 --out OUT/bench`` (``--budget S``: ``--budget S`` instead). Its cold starts tune again (gemmreg gives
   every cold start empty caches, so a user's first call is what is
   measured); the timed processes use what their cold start chose, which
   step 1's record shows the evidence for.

``--skip-tune`` / ``--skip-bench`` run one half; ``--points 1,16`` keeps the
points of those token counts (M). Nothing is typed by hand: the tables are
the tuner's and gemmreg's own output.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHAPES = ROOT / "examples" / "shapes" / "llm-projections.yaml"
START = time.monotonic()


def say(text: str) -> None:
    print(f"[{time.monotonic() - START:7.1f}s] {text}", flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path, help="folder for everything written")
    p.add_argument("--shapes", type=Path, default=DEFAULT_SHAPES, help="a gemmreg shapes file")
    p.add_argument("--dtype", choices=("bf16", "fp16"), default=None, help="override the file's")
    p.add_argument("--points", default="", help="comma-separated M values to keep (default all)")
    p.add_argument("--processes", type=int, default=5, help="gemmreg bench --processes")
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        help="gemmreg bench --budget instead of --processes: a sequential run that adds "
        "processes to a point until its pair is decided (one disturbed process then "
        "costs more processes, not the verdict)",
    )
    p.add_argument("--skip-tune", action="store_true")
    p.add_argument("--skip-bench", action="store_true")
    return p.parse_args(argv)


def shapes_file(args: argparse.Namespace) -> tuple[Path, list[dict[str, Any]]]:
    """The rows to run, and a file holding exactly them: the given one when
    nothing was filtered or overridden, else ``OUT/shapes.json``. Read by
    gemmreg's own reader (YAML, JSON or CSV, checked as ``bench`` checks it)."""
    from gemmreg.timing.shape_files import read_shapes

    rows = [
        {"name": r.name, "m": r.m, "n": r.n, "k": r.k, "dtype": r.dtype or "bf16",
         "layout": r.layout or "rowmajor", "weight": r.weight}
        for r in read_shapes(args.shapes)
    ]  # fmt: skip
    keep = {int(v) for v in args.points.split(",") if v.strip()}
    if keep:
        rows = [row for row in rows if row["m"] in keep]
    if args.dtype:
        rows = [{**row, "dtype": args.dtype} for row in rows]
    if not rows:
        raise SystemExit("no points left to run")
    if not keep and not args.dtype:
        return args.shapes, rows
    path = args.out / "shapes.json"
    path.write_text(json.dumps({"shapes": rows}, indent=1) + "\n", encoding="utf-8")
    return path, rows


TUNING_ENV = ("GEMMREG_CACHE_DIR", "TRITON_CACHE_DIR", "GEMMREG_TRITON_TUNED_RETUNE")
"""Set for the tuning in this process (before gemmreg is imported), never
passed to the bench: its cold starts get empty caches of gemmreg's making."""


def tuning_env(out: Path) -> dict[str, str]:
    return dict(
        zip(TUNING_ENV, (str(out / "tuning"), str(out / "tuning" / "triton"), "1"), strict=True)
    )


def tune(rows: list[dict[str, Any]], out: Path) -> list[dict[str, Any]]:
    """``triton_tuned.choose`` at every row, a forced retune, into ``out``
    (the environment of :func:`tuning_env`, set by ``main``)."""
    import gemmreg
    from gemmreg_plugins import triton_tuned
    from gemmreg_plugins.triton_tuned import configs, dispatch

    where = gemmreg.where()
    if where.backend != "cuda" or where.multiprocessors is None:
        raise SystemExit(f"tuning needs a CUDA GPU; this is {where.backend}")
    records = []
    for row in rows:
        problem = gemmreg.Problem(
            m=int(row["m"]),
            n=int(row["n"]),
            k=int(row["k"]),
            dtype=row.get("dtype", "bf16"),
            layout=row.get("layout", "rowmajor"),
        )
        began = time.monotonic()
        choice, precision, sms = triton_tuned.choose(problem, where)
        tuning_s = round(time.monotonic() - began, 1)
        m, n, k = problem.m, problem.n, problem.k
        record = {
            "name": row.get("name", ""),
            "shape": f"{m}x{n}x{k}",
            "dtype": problem.dtype,
            "layout": problem.layout,
            "sms": sms,
            "family": dispatch.family(m, n, k, sms),
            "tuned_volume": configs.tuning_volume(m, n, k) >= configs.TUNE_MIN_VOLUME,
            "best": choice.best.name,
            "path": choice.best.path,
            "origin": choice.origin,
            "contenders": len(choice.timings_ms),
            "skipped": choice.skipped,
            "timings_ms": choice.timings_ms,
            "screened_ms": choice.screened_ms,
            "lead": choice.lead,
            "seconds": tuning_s,
            "against_torch_mm": against_cublas(problem, choice, precision, sms),
        }
        records.append(record)
        say(f"{record['shape']} {problem.dtype}: {record['family']} -> {record['best']} "
            f"({record['origin']}, {record['seconds']} s{lead_text(choice.lead)}) "
            f"{record['against_torch_mm']}")  # fmt: skip
    return records


def lead_text(lead: dict[str, Any] | None) -> str:
    """The pick against its runner-up, for the console line: a lead won in
    about half the rounds is a coin toss (``interleaving.head_to_head``)."""
    if not lead:
        return ""
    return (
        f"; {lead['median_lead']}x ahead of {lead['runner_up']},"
        f" faster in {lead['rounds_won']} of {lead['rounds']} rounds"
    )


REFERENCE_ROUNDS = 5
"""Alternating medians of the winner and ``torch.mm`` per point, on gemmreg's
clock (:func:`gemmreg.sample_ms`, as the tuner's own ranking):
enough to see a 0.5x from a 1.05x in a second, which is all the estimate is
for (the bench that follows gives the verdicts)."""


def against_cublas(problem: Any, choice: Any, precision: str, sms: int) -> dict[str, Any]:
    """The winner's and ``torch.mm``'s milliseconds on one set of operands,
    each the median of ``REFERENCE_ROUNDS`` alternating measurements of the
    tuner's own (``device_trial.measure_ms``: L2 flushed clean, the batch
    queued before the GPU runs it), and the speedup ``torch_ms / best_ms``."""
    import statistics

    import gemmreg
    import torch
    from gemmreg_plugins.triton_tuned import device_trial, launchers

    def make_launch(config: Any) -> Any:
        return launchers.launcher(
            config, problem.m, problem.n, problem.k, precision, sms, fallback=choice.fallback
        )

    trial = device_trial.device_trial(
        problem.m, problem.n, problem.k, gemmreg.torch_dtype(problem.dtype),
        problem.layout, make_launch,
    )  # fmt: skip
    ours = trial.build(choice.best)
    ours()
    if (bad := trial.verify()) is not None:
        return {"wrong": bad}
    a, b, out = trial.a, trial.b, trial.out

    def cublas() -> None:
        torch.mm(a, b, out=out)

    best_ms: list[float] = []
    torch_ms: list[float] = []
    for _ in range(REFERENCE_ROUNDS):
        best_ms.append(device_trial.measure_ms(ours))
        torch_ms.append(device_trial.measure_ms(cublas))
    best, ref = statistics.median(best_ms), statistics.median(torch_ms)
    return {"best_ms": best, "torch_ms": ref, "speedup": ref / best}


def table(records: list[dict[str, Any]]) -> str:
    lines = [f"{'shape':<17} {'family':<8} {'best':<48} {'path':<15} {'s':>6} {'vs mm':>6}"]
    for r in records:
        speedup = r["against_torch_mm"].get("speedup", float("nan"))
        lines.append(
            f"{r['shape']:<17} {r['family']:<8} {r['best']:<48} {r['path']:<15} "
            f"{r['seconds']:>6} {speedup:>6.3f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    bench_env = {k: v for k, v in os.environ.items() if k not in TUNING_ENV}
    if not args.skip_tune and not args.skip_bench:
        # Tune in a child process: this one would otherwise keep its CUDA context
        # and the tuner's memory through the bench, which then times beside another
        # process on the GPU (and says so: "SHARED GPU").
        again = [sys.executable, str(Path(__file__).resolve())]
        again += [*(sys.argv[1:] if argv is None else argv), "--skip-bench"]
        tuned = subprocess.run(again, check=False)
        if tuned.returncode:
            say(f"tuning exited {tuned.returncode}")
            return tuned.returncode
        args.skip_tune = True
    if not args.skip_tune:
        os.environ.update(tuning_env(args.out))
    path, rows = shapes_file(args)
    if not args.skip_tune:
        say(f"tuning {len(rows)} points")
        records = tune(rows, args.out)
        (args.out / "choices.json").write_text(json.dumps(records, indent=1) + "\n")
        (args.out / "choices.txt").write_text(table(records) + "\n")
        print(table(records), flush=True)
    if args.skip_bench:
        return 0
    command = [
        sys.executable,
        "-m",
        "gemmreg",
        "bench",
        "torch_ref",
        "triton_tuned",
        "--shapes",
        str(path),
        *(["--budget", str(args.budget)] if args.budget is not None else []),
        *(["--processes", str(args.processes)] if args.budget is None else []),
        "--out",
        str(args.out / "bench"),
    ]
    say("bench: " + " ".join(command[1:]))
    done = subprocess.run(command, env=bench_env, check=False)
    say(f"bench exited {done.returncode}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
