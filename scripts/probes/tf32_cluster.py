"""The TF32 Gluon kernel in clusters of two with A multicast
(``tf32_cluster_kernel.py``): right, and how fast against cuBLAS's TF32 and
the single-CTA kernel, in interleaved rounds.

Needs Triton 3.9 (the kernel's docstring says what of it) on a Hopper GPU,
gemmreg installed; a Triton the GPU machine lacks can travel there packed
by ``triton_carry.py``::

    python scripts/probes/tf32_cluster.py check --out "$OUT/check.json"
    python scripts/probes/tf32_cluster.py time --size 8192 --size 4096 --rounds 60 \
        --forms s4,s4-vs --out "$OUT/time.json"

``check``: every form against float64 at edge shapes and two squares, the
error as a share of sum |a||b| (TF32 rounds each input to 10 bits, so about
2^-10 to 2^-9), and five repeated calls bit for bit. ``time``: rounds in a
Williams order (``gemmreg.williams_rows``), each candidate's median of
``--calls`` samples on gemmreg's clock (``gemmreg.sample_ms``: L2 flushed,
the batch queued first), its time over cuBLAS's in the same round.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))  # the kernel and the shared runner parts beside it
from cluster_runs import SLOTS, error_share, first_and_repeats, interleaved_rounds, persistent_call

FORMS = {"s4": (4, False), "s4-vs": (4, True), "s3-vs": (3, True)}
"""Cluster forms: stages and the 16-byte store, as the single-CTA kernel's."""
SINGLE = "gluon_tf32:256x128x32-s4-w4-vs"
"""The single-CTA kernel's config as ``GEMMREG_TRITON_TUNED_CONFIG`` names it."""
EDGES = ((300, 500, 200), (257, 132, 36), (513, 1000, 4100), (1, 4, 4), (1000, 260, 1000),
         (256, 256, 64), (384, 4100, 512), (2048, 2048, 2048), (4096, 4096, 4096))  # fmt: skip
"""(m, n, k): tails in every dimension, K under one ring, one tile, the
squares; N and K multiples of 4 (TMA's 16-byte strides in fp32)."""


def cluster_launch(a: Any, b: Any, out: Any, form: str) -> Callable[[], None]:
    """``call()`` running the cluster kernel in ``form`` on (a, b) into out."""
    import tf32_cluster_kernel as kernel
    import triton

    stages, vector_store = FORMS[form]
    m, k = a.shape
    n = b.shape[1]
    a_desc, b_desc = kernel.descriptors(a, b, 256, 128, 32)
    pairs = triton.cdiv(m, 256) * triton.cdiv(n, 256)

    def launch(programs: int) -> Any:
        return kernel.gemm_tf32_cluster[(programs,)](
            a_desc, b_desc, out, m, n, k, out.stride(0), GROUP_M=8, PROGRAMS=programs,
            STAGES=stages, VECTOR_STORE=vector_store, num_warps=4, num_ctas=2,
        )  # fmt: skip

    return persistent_call(launch, pairs, form)


def single_launch(a: Any, b: Any, out: Any) -> Callable[[], None]:
    """``call()`` running triton_tuned's single-CTA TF32 Gluon kernel (SINGLE)."""
    import gemmreg
    from gemmreg_plugins import triton_tuned

    m, k = a.shape
    problem = gemmreg.Problem(m=m, n=b.shape[1], k=k, dtype="fp32", layout="rowmajor")
    launch = triton_tuned.prepare(problem)
    return lambda: launch(a, b, out)


def check(forms: Sequence[str]) -> dict[str, Any]:
    """Each form at every EDGES shape: error share, NaNs, bitwise repeats."""
    import torch

    found: dict[str, Any] = {}
    for m, n, k in EDGES:
        a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = True
        cublas = error_share(torch.mm(a, b), a, b)
        for form in forms:
            out = torch.full((m, n), float("nan"), device="cuda")
            first, same = first_and_repeats(cluster_launch(a, b, out, form), out)
            share = error_share(first, a, b)
            ok = same and not bool(first.isnan().any()) and share < 2.0**-8
            found[f"{m}x{n}x{k} {form}"] = {"error_share": share, "cublas_share": cublas,
                                            "repeats_equal": same, "ok": ok}  # fmt: skip
            print(f"{m}x{n}x{k:<6} {form:6} share {share:.3g} (cuBLAS {cublas:.3g}) "
                  f"repeats equal {same} {'ok' if ok else 'WRONG'}", flush=True)  # fmt: skip
    return found


def time_rounds(size: int, rounds: int, calls: int, forms: Sequence[str]) -> dict[str, Any]:
    """Interleaved rounds at size^3: each candidate's time over cuBLAS's."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = True
    a, b = torch.randn(size, size, device="cuda"), torch.randn(size, size, device="cuda")
    candidates: dict[str, Callable[[], Any]] = {}
    for name in ("cublas", "single", *forms):
        out = torch.empty(size, size, device="cuda")
        if name == "cublas":
            candidates[name] = functools.partial(torch.mm, a, b, out=out)
        elif name == "single":
            candidates[name] = single_launch(a, b, out)
        else:
            candidates[name] = cluster_launch(a, b, out, name)
    times, summary = interleaved_rounds(candidates, "cublas", rounds, calls)
    for name, row in summary.items():
        print(f"{size}^3 {name:7} {row['median_ms']:.4f} ms  x{row['speedup_median']:.4f} "
              f"({row['speedup_low']:.4f}-{row['speedup_high']:.4f})", flush=True)  # fmt: skip
    return {"size": size, "rounds": rounds, "calls": calls, "summary": summary, "ms": times}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("check", "time"))
    parser.add_argument("--size", type=int, action="append")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--forms", default=",".join(FORMS), help="cluster forms, comma-separated")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    forms = args.forms.split(",")
    if unknown := sorted(set(forms) - set(FORMS)):
        parser.error(f"unknown form(s) {', '.join(unknown)}; known: {', '.join(FORMS)}")
    os.environ.setdefault("GEMMREG_TRITON_TUNED_TUNE", "0")
    os.environ.setdefault("GEMMREG_TRITON_TUNED_CONFIG", SINGLE)
    import gemmreg  # noqa: F401 (first: gemmreg decides the backend before triton is imported)
    import torch
    import triton

    found: dict[str, Any] = {
        "triton": triton.__version__, "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
    }  # fmt: skip
    if args.what == "check":
        found["check"] = check(forms)
    else:
        sizes = args.size or [4096]
        found["time"] = [time_rounds(s, args.rounds, args.calls, forms) for s in sizes]
    found["cluster_slots"] = SLOTS
    print("clusters at once:", SLOTS)
    if args.out:
        args.out.write_text(json.dumps(found, indent=1))
    return 0 if args.what == "time" or all(r["ok"] for r in found["check"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
