"""The 16-bit Gluon kernel in clusters of two with A multicast
(``f16_cluster_kernel.py``): right, and how fast against torch.mm (cuBLAS)
at 2048 x 1024 x 4096 with B a transposed view, in interleaved rounds.

On an H100 (``evidence/2026-12-06-h100-fp8-128-tokens-and-16-bit-checks``)
every case ``check`` reached was right, and every form was slower than
both torch.mm and triton_tuned's one-CTA pick at 2048 x 1024 x 4096 and
128 x 14336 x 4096: the multicast does not pay for the follower's
hand-back as written. Needs Triton 3.9 (the
kernel's docstring says what of it) on a Hopper GPU, gemmreg installed; a
Triton the GPU machine lacks can travel there packed by ``triton_carry.py``::

    python scripts/probes/f16_cluster.py check --out "$OUT/check.json"
    python scripts/probes/f16_cluster.py time --rounds 60 --out "$OUT/time.json"

``check``: every form, fp16 and bf16, B row-major and B = W.T (K-major),
against float64 at the shapes of SHAPES; the error as a share of
sum |a||b| next to torch.mm's, NaNs, and five repeated calls bit for bit.
Shapes TMA cannot take (a row stride not a multiple of 16 bytes) are
skipped and listed with the reason. ``time``: rounds in a Williams order
(``gemmreg.williams_rows``) at ``--shape`` (default 2048x1024x4096), B a
transposed view, each candidate's median of ``--calls`` samples on
gemmreg's clock (``gemmreg.sample_ms``: L2 flushed, the batch queued
first), and torch.mm's time over the candidate's in the same round. The
candidates: torch.mm, ``ours`` (triton_tuned with ``OURS`` named, its pick
there, left out with the reason where it cannot be made) and each form.
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

FORMS = {"s4-vs": (4, True), "s5": (5, False), "s5-vs": (5, True), "s6": (6, False),
         "s6-vs": (6, True)}  # fmt: skip
"""Cluster forms: ring stages, and whether C goes out in 16-byte stores."""
SHAPES = ((2048, 1024, 4096), (128, 14336, 4096), (300, 500, 200), (257, 132, 40),
          (513, 1000, 4104), (1, 8, 8), (1000, 264, 1000), (128, 256, 64), (384, 4100, 512),
          (100, 100, 100), (4096, 4096, 4096))  # fmt: skip
"""(m, n, k): the shape cuBLAS wins, a one-row-of-tiles decode shape, tails
in every dimension (half a cluster tile, a follower wholly past N), K under
one ring, one cluster tile, K not a multiple of 8 (skipped), a square."""
OURS = "persistent_tma:128x128x64-s5-w8-g8-split"
"""triton_tuned's pick at 2048x1024x4096 (B a transposed view) on an H100, as
``GEMMREG_TRITON_TUNED_CONFIG`` names it: timed in the same rounds."""
DTYPES = ("fp16", "bf16")
ROUNDOFF = {"fp16": 2.0**-11, "bf16": 2.0**-8}
"""Unit roundoff of C's dtype: C is rounded once to it after fp32 sums."""


def _torch_dtype(name: str) -> Any:
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16}[name]


def cannot_take(m: int, n: int, k: int, kmajor: bool) -> str | None:
    """Why TMA cannot describe this problem's operands, or None: every row
    stride must be a multiple of 16 bytes (8 elements of 16 bits)."""
    if k % 8:
        return f"K={k} not a multiple of 8 (A's row stride)"
    if not kmajor and n % 8:
        return f"N={n} not a multiple of 8 (row-major B's row stride)"
    return None


def cluster_launch(a: Any, b: Any, kmajor: bool, out: Any, form: str) -> Callable[[], None]:
    """``call()`` running the cluster kernel in ``form``: out = a @ b, or
    with ``kmajor`` out = a @ b.T (b then W, (N, K) row-major)."""
    import f16_cluster_kernel as kernel
    import triton

    stages, vector_store = FORMS[form]
    m, k = a.shape
    n = b.shape[0] if kmajor else b.shape[1]
    a_desc, b_desc = kernel.descriptors(a, b, kmajor)
    pairs = triton.cdiv(m, 128) * triton.cdiv(n, 256)

    def launch(programs: int) -> Any:
        return kernel.gemm_f16_cluster[(programs,)](
            a_desc, b_desc, out, m, n, k, out.stride(0), GROUP_M=8, PROGRAMS=programs,
            STAGES=stages, VECTOR_STORE=vector_store, num_warps=4, num_ctas=2,
        )  # fmt: skip

    return persistent_call(launch, pairs, form)


def ours_launch(a: Any, w: Any, out: Any, dtype: str) -> Callable[[], None]:
    """``call()`` running triton_tuned with the config ``GEMMREG_TRITON_TUNED_CONFIG``
    names (``OURS`` unless set) on (a, w.T) into out, as the core lays out B."""
    import gemmreg
    from gemmreg_plugins import triton_tuned

    (m, k), n = a.shape, w.shape[0]
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype=dtype, layout="transposedB")
    launch = triton_tuned.prepare(problem)
    b = w.t()  # made once, as torch.mm's candidate binds it
    return lambda: launch(a, b, out)


def check(forms: Sequence[str]) -> dict[str, Any]:
    """Each form, dtype and B layout at every SHAPES shape it can take."""
    import torch

    found: dict[str, Any] = {}
    for (m, n, k), dtype, kmajor in (
        (s, d, km) for s in SHAPES for d in DTYPES for km in (True, False)
    ):
        case = f"{m}x{n}x{k} {dtype} {'W.T' if kmajor else 'B'}"
        if reason := cannot_take(m, n, k, kmajor):
            found[case] = {"skipped": reason, "ok": True}
            print(f"{case:32} skipped: {reason}", flush=True)
            continue
        a = torch.randn(m, k, device="cuda", dtype=_torch_dtype(dtype))
        b = torch.randn(n, k, device="cuda", dtype=a.dtype)  # W; B = W.T
        if not kmajor:
            b = b.t().contiguous()
        view = b.t() if kmajor else b
        cublas = error_share(torch.mm(a, view), a, view)
        for form in forms:
            out = torch.full((m, n), float("nan"), device="cuda", dtype=a.dtype)
            first, same = first_and_repeats(cluster_launch(a, b, kmajor, out, form), out)
            share = error_share(first, a, view)
            ok = same and not bool(first.isnan().any()) and share < 2 * ROUNDOFF[dtype]
            found[f"{case} {form}"] = {"error_share": share, "torch_share": cublas,
                                       "repeats_equal": same, "ok": ok}  # fmt: skip
            print(f"{case:32} {form:6} share {share:.3g} (torch.mm {cublas:.3g}) "
                  f"repeats equal {same} {'ok' if ok else 'WRONG'}", flush=True)  # fmt: skip
    return found


def time_rounds(shape: tuple[int, int, int], dtype: str, rounds: int, calls: int,
                forms: Sequence[str]) -> dict[str, Any]:  # fmt: skip
    """Interleaved rounds, B = W.T a view: torch.mm's time over each's."""
    import torch

    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=_torch_dtype(dtype))
    w = torch.randn(n, k, device="cuda", dtype=a.dtype)
    candidates: dict[str, Callable[[], Any]] = {}
    for name in ("torch", "ours", *forms):
        out = torch.empty(m, n, device="cuda", dtype=a.dtype)
        if name == "torch":
            candidates[name] = functools.partial(torch.mm, a, w.t(), out=out)
        elif name == "ours":
            try:
                candidates[name] = ours_launch(a, w, out, dtype)
            except Exception as error:  # the probe's subject is the cluster kernel
                print(f"ours left out: {type(error).__name__}: {error}", flush=True)
        else:
            candidates[name] = cluster_launch(a, w, True, out, name)
    times, summary = interleaved_rounds(candidates, "torch", rounds, calls)
    for name, row in summary.items():
        print(f"{m}x{n}x{k} {dtype} W.T {name:6} {row['median_ms'] * 1000:.2f} us  "
              f"x{row['speedup_median']:.4f} ({row['speedup_low']:.4f}-"
              f"{row['speedup_high']:.4f})", flush=True)  # fmt: skip
    return {"shape": shape, "dtype": dtype, "rounds": rounds, "calls": calls,
            "summary": summary, "ms": times}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("check", "time"))
    parser.add_argument("--shape", default="2048x1024x4096", help="MxNxK for time")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="for time, comma-separated")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--forms", default=",".join(FORMS), help="cluster forms, comma-separated")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    forms = args.forms.split(",")
    if unknown := sorted(set(forms) - set(FORMS)):
        parser.error(f"unknown form(s) {', '.join(unknown)}; known: {', '.join(FORMS)}")
    import gemmreg  # noqa: F401 (first: gemmreg decides the backend before triton is imported)
    import torch

    os.environ.setdefault("GEMMREG_TRITON_TUNED_CONFIG", OURS)
    import triton

    found: dict[str, Any] = {
        "triton": triton.__version__, "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
    }  # fmt: skip
    if args.what == "check":
        found["check"] = check(forms)
    else:
        shape = tuple(int(x) for x in args.shape.split("x"))
        found["time"] = [time_rounds(shape, d, args.rounds, args.calls, forms)
                         for d in args.dtypes.split(",")]  # fmt: skip
    found["cluster_slots"] = SLOTS
    print("clusters at once:", SLOTS)
    if args.out:
        args.out.write_text(json.dumps(found, indent=1))
    return 0 if args.what == "time" or all(r["ok"] for r in found["check"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
