"""Where triton_tuned's host launch path goes, beside torch.mm's.

On a GPU machine (the repository installed)::

    python scripts/probes/launch_path.py --out "$OUT/launch.json"

Why: ``gemmreg bench`` keeps the host's time per call apart from the GPU's
(``host ms``), and on the H200 triton_tuned's was 27-200 us against cuBLAS's
15-73 (``HOST-PACED`` notes; the 2026-12-04 runs under ``evidence/``):
called back to back without a CUDA graph, the host paces a decode GEMM. This
says which part of the path costs what before any of it is changed.

At each point (``--points``, ``MxNxK``; B a transposed view of a row-major
weight, as a linear layer's), after triton_tuned's ``prepare`` (the tuner
runs, or its cache answers) and a warm-up:

- ``host_us``: the wall time of ``--calls`` calls queued back to back behind
  a GPU spin long enough that the queue never waits on the GPU, over the
  count; the median of ``--rounds`` rounds, for the plugin's launch and for
  ``torch.mm(a, b, out=c)``;
- ``profile``: ``cProfile`` over ``--calls`` calls of the plugin's launch,
  the functions with the most time of their own (``tottime``), as share of
  the profiled total (cProfile's own cost inflates every share alike).

``--dry-run`` prints the points and exits (no GPU needed).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import gemmreg  # first: gemmreg decides the backend before triton is imported
from gemmreg.contract.options import parse_shapes
from gemmreg.timing.clocks import gpu_spin

DEFAULT_POINTS = "1x4096x4096,128x4096x4096,128x14336x4096,2048x1024x4096,8192x4096x4096"
SPIN_CYCLES = 50_000_000
"""About 25 ms of GPU spin at the H200's clocks: longer than any batch of calls queues."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--out", type=Path, help="JSON file for every figure (default: none)")
    p.add_argument("--points", default=DEFAULT_POINTS, help="MxNxK points, comma-separated")
    p.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--dry-run", action="store_true")
    return p.parse_args(argv)


@contextlib.contextmanager
def gpu_busy() -> Iterator[None]:
    """The GPU spinning while the block runs, so that every call in it only
    queues (never waits on the GPU); synchronised before and after."""
    import torch

    torch.cuda.synchronize()
    gpu_spin(torch, SPIN_CYCLES)
    yield
    torch.cuda.synchronize()


def host_us(call: Callable[[], Any], calls: int, rounds: int) -> float:
    """Median over ``rounds`` of the host's time a call, queued behind a spin."""
    figures = []
    for _ in range(rounds):
        with gpu_busy():
            began = time.perf_counter()
            for _ in range(calls):
                call()
            figures.append((time.perf_counter() - began) * 1e6 / calls)
    return statistics.median(figures)


def profile(call: Callable[[], Any], calls: int, top: int) -> list[dict[str, Any]]:
    """The ``top`` functions by time of their own over ``calls`` calls."""
    profiler = cProfile.Profile()
    with gpu_busy():
        profiler.enable()
        for _ in range(calls):
            call()
        profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in stats.values()) or 1.0
    rows = sorted(stats.items(), key=lambda item: -item[1][2])[:top]
    return [
        {
            "function": f"{Path(file).name}:{line}:{name}",
            "calls_per_launch": entry[1] / calls,
            "own_us_per_launch": entry[2] * 1e6 / calls,
            "share": entry[2] / total,
        }
        for (file, line, name), entry in rows
    ]


def measure(m: int, n: int, k: int, dtype: str, args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from gemmreg_plugins import triton_tuned

    torch_dtype = gemmreg.torch_dtype(dtype)
    a = torch.randn(m, k, device="cuda").to(torch_dtype)
    b = torch.randn(n, k, device="cuda").to(torch_dtype).T  # a linear layer's weight, viewed
    out = torch.empty(m, n, device="cuda", dtype=torch_dtype)
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype, layout="transposedB")
    launch = triton_tuned.prepare(problem)
    for _ in range(3):  # compiled and warm
        launch(a, b, out)
    torch.cuda.synchronize()
    plugin = host_us(lambda: launch(a, b, out), args.calls, args.rounds)
    mm = host_us(lambda: torch.mm(a, b, out=out), args.calls, args.rounds)
    return {
        "point": f"{m}x{n}x{k}",
        "dtype": dtype,
        "variant": getattr(launch, "gemmreg_variant", None) or repr(launch),
        "host_us": {"triton_tuned": plugin, "torch.mm": mm},
        "profile": profile(lambda: launch(a, b, out), args.calls, args.top),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    wanted = parse_shapes(args.points)
    print(f"{len(wanted)} points, {args.dtype}, B transposed: {wanted}")
    if args.dry_run:
        return 0
    results = []
    for m, n, k in wanted:
        found = measure(m, n, k, args.dtype, args)
        results.append(found)
        hosts = found["host_us"]
        print(f"\n{found['point']} {found['variant']}: host us a call, triton_tuned "
              f"{hosts['triton_tuned']:.1f}, torch.mm {hosts['torch.mm']:.1f}")  # fmt: skip
        for row in found["profile"]:
            print(f"  {row['own_us_per_launch']:7.2f} us  {row['share']:6.1%}  "
                  f"x{row['calls_per_launch']:<5.3g} {row['function']}")  # fmt: skip
    if args.out is not None:
        args.out.write_text(json.dumps({"points": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
