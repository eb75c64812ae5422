"""The TF32 Gluon kernel and cuBLAS's TF32 kernel side by side under Nsight Compute.

Why: on an H100 the Gluon kernel ran 0.95-0.99x cuBLAS's TF32 at 4096^3
and 8192^3 in gemmreg's verdicts, at the clocks the card chose. Nsight
Compute locks the clocks at base and counts what each kernel does in its
cycles: whether the gap is in the work per cycle, or in what the work costs
a power-limited card (traffic, instructions) and so its clocks.

On a GPU machine (gemmreg installed), the profiled process, one warm call
of each kernel at SIZE^3 fp32 in Nsight Compute's range::

    GEMMREG_TRITON_TUNED_TUNE=0 GEMMREG_TRITON_TUNED_CONFIG=gluon_tf32:256x128x32-s4-w4-vs \\
      ncu --profile-from-start off --set full -k 'regex:gemm|xmma' -o tf32-8192 \\
      python scripts/probes/tf32_ncu.py run 8192
    ncu --import tf32-8192.ncu-rep --page details --csv > tf32-8192-details.csv

then, anywhere, the metrics that tell the two apart (``--page details``,
plain or gzipped)::

    python scripts/probes/tf32_ncu.py compare tf32-8192-details.csv
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

METRICS = (
    "SM Frequency",
    "Elapsed Cycles",
    "Duration",
    "Grid Size",
    "Cluster Size",
    "Registers Per Thread",
    "Dynamic Shared Memory Per Block",
    "Compute (SM) Throughput",
    "L2 Cache Throughput",
    "L2 Hit Rate",
    "DRAM Throughput",
    "Executed Instructions",
    "Local Memory Spilling Requests",
    "Warp Cycles Per Issued Instruction",
)
"""Rows of the comparison: Nsight Compute's own names (its details page)."""


def tf32_square(size: int) -> tuple[Any, Any, Any, Any]:
    """``(launch, a, b, out)`` at SIZE^3 fp32 on the GPU: triton_tuned prepared
    (as the environment names its config), ``torch.mm`` allowed TF32: what
    this probe profiles and ``tf32_clocks.py`` times. gemmreg is imported
    first, before triton (it decides the backend)."""
    import gemmreg  # first: gemmreg decides the backend before triton is imported
    import torch
    from gemmreg_plugins import triton_tuned

    torch.backends.cuda.matmul.allow_tf32 = True
    a, b = (torch.randn(size, size, device="cuda") for _ in range(2))
    out = torch.empty(size, size, device="cuda")
    problem = gemmreg.Problem(m=size, n=size, k=size, dtype="fp32", layout="rowmajor")
    return triton_tuned.prepare(problem), a, b, out


def run(size: int) -> None:
    """One warm call of triton_tuned and of ``torch.mm`` (:func:`tf32_square`),
    between cudaProfilerStart and Stop."""
    launch, a, b, out = tf32_square(size)
    import torch

    print(getattr(launch, "gemmreg_variant", None) or repr(launch))
    for _ in range(3):  # compiled and warm
        launch(a, b, out)
        torch.mm(a, b, out=out)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    launch(a, b, out)
    torch.mm(a, b, out=out)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def read_details(path: Path) -> dict[str, dict[str, tuple[str, str]]]:
    """{kernel: {metric: (value, unit)}} from a ``--page details --csv`` export."""
    raw = path.read_bytes()
    text = gzip.decompress(raw).decode() if path.suffix == ".gz" else raw.decode()
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        found.setdefault(row["Kernel Name"], {})[row["Metric Name"]] = (
            row["Metric Value"],
            row["Metric Unit"],
        )
    return found


def compare(path: Path) -> str:
    """The :data:`METRICS` of every kernel in the export, a column each."""
    kernels = read_details(path)
    names = list(kernels)
    lines = [f"{path.name}: " + "; ".join(f"[{i}] {name}" for i, name in enumerate(names))]
    lines.append(
        f"{'metric':36} {'unit':16} " + " ".join(f"{f'[{i}]':>14}" for i in range(len(names)))
    )
    for metric in METRICS:
        cells = [kernels[name].get(metric, ("-", "")) for name in names]
        unit = next((u for _, u in cells if u), "")
        lines.append(f"{metric:36} {unit:16} " + " ".join(f"{v:>14}" for v, _ in cells))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="the profiled process").add_argument("size", type=int)
    sub.add_parser("compare", help="the metrics side by side").add_argument(
        "details", type=Path, nargs="+"
    )
    args = p.parse_args(argv)
    if args.command == "run":
        run(args.size)
    else:
        print("\n\n".join(compare(path) for path in args.details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
