"""Sweep split-K configs on a GPU and say which one wins, per shape and mode.

Every candidate goes through the plugin's own launch
(:func:`gemmreg_splitk.plugin.build_launch`, what ``prepare`` runs), is
checked twice against ``torch.mm`` in fp32 (the second call relies on the
cached buffers being left clean) with the plugin's own tolerance, and only
then timed: a pair of CUDA events around each of ``--reps`` calls with L2
flushed before each, as gemmreg samples (``--warm``: back-to-back calls), ``--trials``
times, interleaved with ``torch.mm`` on the same inputs; the median trial
counts. As gemmreg's clock does, the flush reads its buffer (clean lines
left; ``--l2 dirty`` zeroes it, as gemmreg did until December 2026 and as
``triton.testing.do_bench`` does), and each batch of calls is queued behind a
GPU spin, so no call's launch path shows on an idle GPU. Wrong or failing candidates are kept in the JSON with the reason.

The search is staged to fit a few minutes: stage 1 sweeps tiles and splits
(``tiles x split`` about 0.5-4 x the SM count) at default warps and stages;
stage 2 varies BLOCK_K, warps, stages and (deterministic mode) the tree
reduction around the best few. The other dtypes re-time the first dtype's
best few and the current choice. Kernels compile beforehand in a pool of
processes sharing Triton's disk cache (``--jobs``); ``--budget-s`` bounds
the whole sweep: candidates past it are recorded as skipped.

Writes ``tune.json`` and prints a table, plus ``tuned.TABLE`` entries to paste
into ``gemmreg_splitk/tuned.py``. Under Triton's interpreter (no GPU) it runs
the same code with wall-clock timing, which ranks nothing: ``--quick`` there
is for tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tune_grid
import tune_pool
import tune_report
from tune_bench import L2_STATES, Bench, bench_for

MODES = {"splitk": False, "splitk_atomic": True}
DEFAULT_SHAPES = "16x16x65536,128x128x32768,64x4096x16384,32x8192x8192"
START = time.monotonic()


def say(text: str) -> None:
    print(f"[{time.monotonic() - START:7.1f}s] {text}", flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--shapes",
        default=DEFAULT_SHAPES,
        help="MxNxK,... (default: the four skinny split-K shapes)",
    )
    p.add_argument("--dtypes", default="fp16,bf16")
    p.add_argument("--modes", default="splitk,splitk_atomic")
    p.add_argument("--out", default="splitk-tune", help="folder for tune.json")
    p.add_argument("--budget-s", type=float, default=300.0, help="stop sweeping after this")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--top", type=int, default=4, help="stage-2 seeds and re-timed configs")
    p.add_argument("--jobs", type=int, default=-1, help="compile processes (-1: CPUs - 2)")
    p.add_argument("--quick", action="store_true", help="a tiny grid (tests, interpreter)")
    p.add_argument("--warm", action="store_true",
                   help="time back-to-back calls with L2 warm (default: flush L2 before each "
                        "call and take the median call, as gemmreg's end-to-end samples)")  # fmt: skip
    p.add_argument("--l2", choices=L2_STATES, default="clean",
                   help="what the flush leaves: clean (read the buffer, gemmreg's default) or "
                        "dirty (zero it)")  # fmt: skip
    p.add_argument("--include-broken", action="store_true",
                   help="add a candidate that drops half of K, to show it is rejected")  # fmt: skip
    return p.parse_args(argv)


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    shapes = []
    for item in filter(None, text.split(",")):
        parts = item.strip().lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise SystemExit(f"tune: bad shape {item!r} (want MxNxK)")
        shapes.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return shapes


def run_group(bench: Bench, cands: list[tune_grid.Candidate], atomic: bool, deadline: float,
              label: str) -> list[dict[str, Any]]:  # fmt: skip
    rows = []
    for cand in cands:
        row = tune_grid.describe(cand, bench.m, bench.n, bench.k, atomic)
        if time.monotonic() > deadline and cand.label != "current":
            row.update(status="skipped", why="budget: past this phase's share of --budget-s")
        else:
            launch, why = bench.check(cand.config, atomic)
            if launch is None:
                row.update(status="rejected", why=why)
            else:
                ms, torch_ms = bench.time(launch)
                row.update(status="ok", ms=ms, torch_ms=torch_ms, ratio=torch_ms / ms)
        rows.append(row)
    ok = [r for r in rows if r["status"] == "ok"]
    top = max(ok, key=lambda r: r["ratio"]) if ok else None
    say(f"{label}: {len(ok)}/{len(rows)} timed"
        + (f", best {top['ms'] * 1e3:.1f} us = {top['ratio']:.3f}x torch.mm ({top['key']})"
           if top else ""))  # fmt: skip
    return rows


PHASE_SHARES = (0.55, 0.8, 1.0)
"""Stage 1, stage 2 and the other dtypes end by these fractions of --budget-s."""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    shapes = parse_shapes(args.shapes)
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES] + [
        d for d in dtypes if d not in ("fp16", "bf16")
    ]
    if unknown or not dtypes or not modes:
        raise SystemExit(
            f"tune: unknown or missing modes/dtypes {unknown} (fp16, bf16; splitk, splitk_atomic)"
        )
    import gemmreg  # decides the backend (and Triton's interpreter) before triton loads

    where = gemmreg.where()
    target = tune_grid.target(where)
    from gemmreg_splitk import tma

    tma_ok = tma.supported(where)  # Hopper or later (or the interpreter): TMA candidates too
    procs = target.processors
    if where.triton_interpreted and "bf16" in dtypes:
        say("bf16 skipped: Triton's interpreter has no bfloat16")
        dtypes = [d for d in dtypes if d != "bf16"] or ["fp16"]
    say(f"{where.device_name} ({procs} SMs), interpreted={where.triton_interpreted}; "
        f"shapes {shapes}, dtypes {dtypes}, modes {modes}, TMA candidates {tma_ok}")  # fmt: skip
    ends = [START + share * args.budget_s for share in PHASE_SHARES]
    pool = tune_pool.Compiler(args.jobs, where)
    points = [(s, mo) for s in shapes for mo in modes]
    first = dtypes[0]
    rows: dict[tuple[tuple[int, int, int], str], list[dict[str, Any]]] = {}
    cands = {p: tune_grid.stage1(*p[0], MODES[p[1]], target, args.quick, args.include_broken,
                                 tma_ok) for p in points}  # fmt: skip
    for phase, label in ((0, "stage 1"), (1, "stage 2")):
        if phase == 1:
            cands = {p: tune_grid.stage2(tune_grid.best(rows[p], args.top), *p[0], MODES[p[1]],
                                         args.quick, rows[p], tma_ok) for p in points}  # fmt: skip
        say(f"{label}: compiling {sum(map(len, cands.values()))} candidates")
        failed = pool.compile(
            [(p[0], first, MODES[p[1]], c.config) for p in points for c in cands[p]], ends[phase]
        )
        say(f"{label}: compiled ({failed} failed; the timing says why)")
        for p in points:
            bench = bench_for(*p[0], first, args)
            name = f"{'x'.join(map(str, p[0]))} {first} {p[1]} {label}"
            rows[p] = rows.get(p, []) + run_group(bench, cands[p], MODES[p[1]], ends[phase], name)
    groups = [
        {"shape": list(p[0]), "dtype": first, "mode": p[1], "candidates": rows[p]} for p in points
    ]
    again = {p: tune_grid.retime(rows[p], MODES[p[1]], args.top) for p in points}
    for dtype in dtypes[1:]:
        pool.compile(
            [(p[0], dtype, MODES[p[1]], c.config) for p in points for c in again[p]], ends[2]
        )
        for p in points:
            name = f"{'x'.join(map(str, p[0]))} {dtype} {p[1]}"
            got = run_group(bench_for(*p[0], dtype, args), again[p], MODES[p[1]], ends[2], name)
            groups.append({"shape": list(p[0]), "dtype": dtype, "mode": p[1], "candidates": got})
    pool.close()
    report = tune_report.summarise(groups, procs, where, time.monotonic() - START, args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tune.json").write_text(json.dumps(report, indent=1, default=str))
    for line in tune_report.table(report):
        print(line)
    say(f"wrote {out / 'tune.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
