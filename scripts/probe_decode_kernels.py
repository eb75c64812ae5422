"""Where a decode-sized GEMM's time goes: torch.mm and triton_tuned's candidates, five clocks.

On a GPU machine (the repository installed)::

    python scripts/probe_decode_kernels.py --out "$OUT/probe.json" --extra NAME ...

``--points``: the shapes file's rows of those token counts (M), and any
``MxNxK``. At each point, for torch.mm, every candidate the tuner weighs
(``triton_tuned.paths_here.candidates_for``) and every ``--extra`` config (named as
the tuning cache names it, ``-g8`` optional), microseconds per call: judge,
gemmreg's own clock (``gemmreg.sample_ms``, what the tuner ranks by and the
verdicts time: L2 flushed clean, each batch queued before the GPU runs it);
bench, ``triton.testing.do_bench``'s median with L2 zeroed before each call
(a host launch path longer than the flush lands inside its events); graph, ``do_bench_cudagraph``'s median (replayed back to back:
no launch path, no flush, so a weight that fits the L2 stays there);
device and clean, the device's own time from ``torch.profiler`` (the
call's kernels summed, median of ``--calls``) after a zeroing flush (dirty
lines, as do_bench leaves them) and after a reading one (clean, as gemmreg
times), and kern, kernels per call; host, the launch call's own wall time.
Every C is checked on a few rows against float64 (``device_trial``). Prints
a table per point, fastest device time first, with ratios to torch.mm, and
writes everything to ``--out`` (JSON). Kernels compile first, in ``--jobs``
processes (Triton's disk cache hands them over).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import attrs
import gemmreg  # first: gemmreg decides the backend before triton is imported
from decode_clocks import clocks, profiled  # scripts/, beside this file
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import device_trial, launchers, paths_here, tuner
from gemmreg_plugins.triton_tuned.launch_config import Config

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHAPES = ROOT / "examples" / "shapes" / "llm-projections.yaml"
MM = "torch.mm"
Point = dict[str, Any]
Entry = Config | tuple[str, str]
"""A config to time, or an extra's name and why it was refused."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--out", type=Path, help="JSON file for every figure (default: none)")
    p.add_argument("--shapes", type=Path, default=DEFAULT_SHAPES, help="a gemmreg shapes file")
    p.add_argument("--points", default="1,16,128,2048x1024x4096", help="M values, MxNxK points")
    p.add_argument("--dtype", choices=("bf16", "fp16"), default=None, help="override the file's")
    p.add_argument("--extra", action="append", default=[], help="a config name to time too")
    p.add_argument("--only", default="", help="time only candidates whose name matches")
    p.add_argument("--calls", type=int, default=20, help="profiled calls per L2 state")
    p.add_argument("--jobs", type=int, default=12, help="compile processes (1: compile inline)")
    return p.parse_args(argv)


def parse_points(spec: str, rows: Sequence[Point], dtype: str | None) -> list[Point]:
    """The file's rows whose M is listed, then each ``MxNxK`` (layout and
    dtype of the file's first row), without repeats."""
    base = {"dtype": rows[0].get("dtype") or "bf16", "layout": rows[0].get("layout") or "rowmajor"}
    keep = {int(t) for t in spec.split(",") if t.strip().isdigit()}
    points = [
        {**base, **{key: row[key] for key in ("m", "n", "k", "dtype", "layout") if row.get(key)}}
        for row in rows
        if row["m"] in keep
    ]
    for token in (t.strip() for t in spec.split(",") if "x" in t):
        m, n, k = (int(v) for v in token.split("x"))
        points.append({**base, "m": m, "n": n, "k": k})
    points = [{**p, "dtype": dtype or p["dtype"]} for p in points]
    return [p for i, p in enumerate(points) if p not in points[:i]]


def render(title: str, rows: Sequence[dict[str, Any]]) -> str:
    """One point's table, fastest device time first, ratios to torch.mm's."""
    mm = next((r for r in rows if r["name"] == MM), {})

    def num(value: Any, digits: int = 1) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    def ratio(row: dict[str, Any], key: str) -> str:
        ours, theirs = row.get(key), mm.get(key)
        return num(ours / theirs, 2) if ours and theirs else "-"

    lines = [title, f"{'config':<46} {'ok':<3} {'device':>7} {'clean':>7} {'kern':>4} "
             f"{'judge':>7} {'bench':>7} {'graph':>7} {'host':>7} {'dev/mm':>6} {'jdg/mm':>6} "
             f"{'bnch/mm':>7}"]  # fmt: skip
    for r in sorted(rows, key=lambda r: (r.get("device_us") is None, r.get("device_us") or 0)):
        lines.append(
            f"{r['name']:<46} {'ok' if r['ok'] else 'NO':<3} {num(r.get('device_us')):>7} "
            f"{num(r.get('clean_us')):>7} {num(r.get('kernels'), 0):>4} "
            f"{num(r.get('judge_us')):>7} {num(r.get('bench_us')):>7} {num(r.get('graph_us')):>7} "
            f"{num(r.get('host_us')):>7} {ratio(r, 'device_us'):>6} {ratio(r, 'judge_us'):>6} "
            f"{ratio(r, 'bench_us'):>7}" + (f"  {r['error'][:80]}" if r.get("error") else "")
        )
    return "\n".join(lines)


def configs_at(point: Point, extras: Sequence[str], only: str) -> tuple[list[Config], list[Entry]]:
    """The tuner's candidates at ``point``, and what to time there: those
    that ``only`` matches, then the extras not among them."""
    keys = ("m", "n", "k", "dtype", "layout")
    found = paths_here.candidates_for(
        gemmreg.Problem(**{key: point[key] for key in keys}), gemmreg.where()
    )
    listed: list[Entry] = [c for c in found if re.search(only, c.name)]
    for name in extras:
        try:
            config = Config.from_name(name)
        except (TypeError, ValueError) as error:
            listed.append((name, str(error)))
            continue
        if config not in listed and not (config.path == "gemv" and config.block_n < point["m"]):
            listed.append(config)  # a GEMV extra only where it has a column per row of A
    return found, listed


def trial_at(point: Point, fallback: Config) -> device_trial.DeviceTrial:
    where = gemmreg.where()
    precision = triton_tuned.INPUT_PRECISION[where.backend]
    m, n, k, sms = point["m"], point["n"], point["k"], where.multiprocessors or 1
    return device_trial.device_trial(
        m, n, k, gemmreg.torch_dtype(point["dtype"]), point["layout"],
        lambda c: launchers.launcher(c, m, n, k, precision, sms, fallback=fallback),
    )  # fmt: skip


def warm(task: tuple[Config, list[tuple[Point, Config]]]) -> None:
    """In a compile process: one call of a config at each of its points
    (with the tiled fallback there); errors are the timing's to report."""
    for point, fallback in task[1]:
        with contextlib.suppress(Exception):
            trial_at(point, fallback).build(task[0])()


def compile_all(points: list[Point], args: argparse.Namespace) -> list[None]:
    tasks: dict[Config, list[tuple[Point, Config]]] = {}
    for point in points:
        found, listed = configs_at(point, args.extra, args.only)
        for config in (c for c in listed if isinstance(c, Config)):
            tasks.setdefault(config, []).append((point, tuner.fallback_of(found, {})))
    if args.jobs <= 1:
        return list(map(warm, tasks.items()))
    try:  # a crashed compile process leaves its kernels to the timing process
        with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
            return list(pool.map(warm, tasks.items()))
    except BrokenProcessPool as error:
        print(f"compile processes broke ({error}); the rest compile as they are timed")
        return []


def measure(point: Point, args: argparse.Namespace) -> dict[str, Any]:
    import torch

    found, listed = configs_at(point, args.extra, args.only)
    trial = trial_at(point, tuner.fallback_of(found, {}))
    a, b, out = trial.a, trial.b, trial.out
    rows: list[dict[str, Any]] = []
    timed: list[tuple[dict[str, Any], Callable[[], None]]] = []
    for config in [(MM, ""), *listed]:
        name = config.name if isinstance(config, Config) else config[0]
        row: dict[str, Any] = {"name": name, "ok": False}
        rows.append(row)
        try:
            if isinstance(config, Config):
                run = trial.build(config)
            elif name != MM:
                raise ValueError(config[1])
            else:
                out.fill_(float("nan"))

                def run() -> None:
                    torch.mm(a, b, out=out)

            run()
            wrong = trial.verify()
            row.update(ok=wrong is None, error=wrong, **clocks(run))
        except Exception as error:
            row["error"] = f"{type(error).__name__}: {error}"
            continue
        timed.append((row, run))
    for (row, _), times in zip(timed, profiled([r for _, r in timed], args.calls), strict=True):
        row.update(times)
    return {**point, "point": "{m}x{n}x{k}".format(**point), "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from gemmreg.timing.shape_files import read_shapes

    points = parse_points(
        args.points, [attrs.asdict(r) for r in read_shapes(args.shapes)], args.dtype
    )
    where = gemmreg.where()
    if where.backend != "cuda":
        raise SystemExit(f"the probe needs a CUDA GPU; this is {where.backend}")
    began = time.monotonic()
    compile_all(points, args)
    print(f"compiled in {time.monotonic() - began:.0f} s ({args.jobs} processes)", flush=True)
    import torch
    import triton

    record: dict[str, Any] = {"device": where.device_name, "triton": triton.__version__,
                              "torch": torch.__version__, "points": []}  # fmt: skip
    for point in points:
        result = measure(point, args)
        record["points"].append(result)
        title = f"{'{m}x{n}x{k}'.format(**point)} {point['dtype']} {point['layout']} (us per call)"
        print(render(title, result["rows"]) + "\n", flush=True)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"done in {time.monotonic() - began:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
