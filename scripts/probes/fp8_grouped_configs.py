"""Which configs triton_tuned's fp8 and grouped paths should take on a GPU:
every candidate beside the reference, at the points their goals name.

On a GPU machine (the repository installed)::

    python scripts/probes/fp8_grouped_configs.py --out "$OUT/configs.json"

Both paths choose their config by a rule (``fp8.config_for``,
``grouped.config_for``) written before any GPU ran them; this probe is what
the rule is to be set from. fp8: e4m3, rowwise scales, bf16 C, B a
transposed view of a row-major weight (``torch._scaled_mm``'s layout), at
4096^3, 8192^3 and Llama 3 8B's projections (``--fp8-tokens``), against
``torch._scaled_mm`` without fast accumulation. Grouped: bf16 members of
``examples/shapes/moe-experts.yaml`` (transposedB), against one ``torch.mm``
per member. Every candidate's C is first compared with the reference's
(a config that disagrees is reported, never timed); then ``--rounds``
rounds, each timing every candidate and the reference in a rotated order
with gemmreg's own clock (``gemmreg.sample_ms``: CUDA events, L2 flushed
clean, the batch queued ahead), ``--samples`` calls each. Prints a table per
point, fastest first, the reference's time over each candidate's (above 1:
faster), and the spread of its rounds' medians, the rule's choice marked;
writes every median (and each round's) to ``--out``. The rounds and the
table are ``ranked_rounds.py``'s, beside this script.
``--dry-run`` lists the points and candidates without a GPU.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import gemmreg  # first: gemmreg decides the backend before triton is imported
from gemmreg.contract.grouping import row_ranges
from gemmreg.timing.shape_files import read_shapes
from gemmreg_plugins.triton_tuned import fp8, fp8_tma, grouped
from ranked_rounds import agrees, report  # beside this script

ROOT = Path(__file__).resolve().parents[2]
LLM = ROOT / "examples" / "shapes" / "llm-projections.yaml"
MOE = ROOT / "examples" / "shapes" / "moe-experts.yaml"
H200_SMS = 132


def fp8_candidates() -> list[fp8.Fp8Config]:
    """Around the rule: 16 to 128 rows, 64 to 256 columns, K 128, 3 or 4 stages
    (a few dozen compiles: the probe must fit a 10-minute command); the Gluon
    kernel's rings; the TMA kernel's splits and pieces (``fp8_tma.TMA_PROBED``)."""
    found = [
        fp8.Fp8Config(block_m=bm, block_n=bn, block_k=bk, num_warps=w, num_stages=s)
        for bm, bn, bk, w, s in itertools.product(
            (16, 64, 128), (64, 128, 256), (128,), (4, 8), (3, 4)
        )
        if (bm * bn >= 128 * 128) == (w == 8)  # 8 warps for the large tiles only
        and (bm, bn) != (16, 256)
        and (bm + bn) * bk * s <= 200 * 1024  # operand ring within shared memory
    ]
    gluon = [  # the warp-specialised kernel's 128 x 128 tiles, its ring 4 to 6 deep
        fp8.Fp8Config(block_m=128, block_n=128, block_k=128, num_warps=4, num_stages=s, gluon=True)
        for s in (4, 5, 6)
    ]
    return found + gluon + list(fp8_tma.TMA_PROBED)


def grouped_candidates() -> list[grouped.GroupedConfig]:
    """Around the rule, in both forms: the pointer kernel's 16 to 128 rows,
    64 to 256 columns, K 64, 3 or 4 stages; the TMA form's 16 rows in 64
    columns, 64 and 128 rows in 128 or 256, K 64, 3 to 5 stages, C stored
    whole or in halves (each within shared memory, its C staging included),
    those of 128 rows and 4 or 5 stages flattened too, or instead with their
    descriptors shared by every tile (``GroupedConfig.shared``: A's, C's and,
    the experts' weights being one stack here, B's); and the Gluon form
    (``GroupedConfig.gluon``) in three of the dense Gluon kernel's configs."""
    pointer = [
        grouped.GroupedConfig(block_m=bm, block_n=bn, block_k=64, num_warps=w, num_stages=s)
        for bm, bn, w, s in itertools.product((16, 32, 64, 128), (64, 128, 256), (4, 8), (3, 4))
        if (bm * bn >= 128 * 128) == (w == 8) and (bm + bn) * 64 * 2 * s <= 200 * 1024
    ]
    tma = [
        grouped.GroupedConfig(
            block_m=bm,
            block_n=bn,
            block_k=64,
            num_warps=w,
            num_stages=s,
            tma=True,
            epilogue_parts=parts,
        )
        for bm, bn, w, s, parts in itertools.product(
            (16, 64, 128), (64, 128, 256), (4, 8), (3, 4, 5), (1, 2)
        )
        if (bm == 128) == (w == 8)
        and (bn == 64) == (bm == 16)  # decode's rows: narrow tiles, twice the column blocks
        and (bm + bn) * 64 * 2 * s + bm * bn * 2 // parts <= 224 * 1024
    ]
    flat = [attrs.evolve(c, flatten=True) for c in tma if c.block_m == 128 and c.num_stages > 3]
    shared = [attrs.evolve(c, shared=True) for c in tma if c.block_m == 128 and c.num_stages > 3]
    gluon = [  # the warp-specialised form in the dense Gluon kernel's tiles
        grouped.GroupedConfig(
            block_m=128, block_n=bn, block_k=64, num_warps=4, num_stages=s, tma=True, gluon=True
        )
        for bn, s in ((256, 3), (128, 4), (128, 6))
    ]
    return pointer + tma + flat + shared + gluon


def fp8_points(tokens: Sequence[int]) -> list[tuple[int, int, int]]:
    llm = [(r.m, r.n, r.k) for r in read_shapes(LLM) if r.m in tokens]
    return [(4096, 4096, 4096), (8192, 8192, 8192), *dict.fromkeys(llm)]


def moe_points() -> list[tuple[tuple[int, ...], int, int]]:
    return [(r.groups, r.n, r.k) for r in read_shapes(MOE)]


def probe_fp8(point: tuple[int, int, int], args: argparse.Namespace) -> dict[str, Any]:
    import torch

    m, n, k = point
    g = torch.Generator(device="cuda").manual_seed(0)
    a = (torch.randn(m, k, device="cuda", generator=g) * 4).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, device="cuda", generator=g) * 4).to(torch.float8_e4m3fn).t()
    sa = torch.rand(m, 1, device="cuda", generator=g) + 0.5
    sb = torch.rand(1, n, device="cuda", generator=g) + 0.5

    def reference() -> Any:
        return torch._scaled_mm(
            a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=False
        )

    def fast_accumulation() -> Any:  # for scale only: cuBLASLt's other precision
        return torch._scaled_mm(
            a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=True
        )

    want = reference()
    calls: dict[str, Callable[[], None]] = {
        "torch._scaled_mm": reference,
        "torch._scaled_mm fast accum": fast_accumulation,
    }
    refused: dict[str, str] = {}
    rule = fp8.config_for(m, n, fp8.gluon_here(gemmreg.where()), k)
    for config in [rule, *(c for c in fp8_candidates() if c != rule and args.match in _name(c))]:
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        name = _name(config) + (" (rule)" if config == rule else "")
        try:
            fp8.run(config, True, a, b, out, sa, sb, H200_SMS)
        except Exception as error:  # a config Triton cannot build here: reported, not timed
            refused[name] = f"{type(error).__name__}: {str(error)[:120]}"
            continue
        if not agrees(out, want):
            refused[name] = "disagrees with torch._scaled_mm"
            continue
        calls[name] = functools.partial(fp8.run, config, True, a, b, out, sa, sb, H200_SMS)
    return report(f"fp8e4m3 {m}x{n}x{k}", "torch._scaled_mm", calls, refused, args)


def probe_grouped(
    point: tuple[tuple[int, ...], int, int], args: argparse.Namespace
) -> dict[str, Any]:
    import torch

    groups, n, k = point
    m = sum(groups)
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    b = (
        torch.randn(len(groups), n, k, device="cuda", generator=g)
        .to(torch.bfloat16)
        .transpose(1, 2)
    )
    out_ref = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    problem = gemmreg.Problem(m=m, n=n, k=k, dtype="bf16", layout="transposedB", groups=groups)
    spans = [(i, lo, hi) for i, (lo, hi) in enumerate(row_ranges(groups)) if hi > lo]

    def loop() -> None:
        for index, lo, hi in spans:
            torch.mm(a[lo:hi], b[index], out=out_ref[lo:hi])

    loop()
    calls: dict[str, Callable[[], None]] = {"torch.mm loop": loop}
    refused: dict[str, str] = {}
    where = gemmreg.where()
    rule = grouped.config_for(groups, n, "bf16", where.backend, grouped.tma_here(problem, where))
    others = (c for c in grouped_candidates() if c != rule and args.match in _name(c))
    for config in [rule, *others]:
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        name = _name(config) + (" (rule)" if config == rule else "")
        try:
            launch = grouped.grouped_launcher(problem, where, "ieee", config=config)
            launch(a, b, out, None)
        except Exception as error:  # reported, not timed
            refused[name] = f"{type(error).__name__}: {str(error)[:120]}"
            continue
        if not agrees(out, out_ref):
            refused[name] = "disagrees with the torch.mm loop"
            continue
        calls[name] = functools.partial(launch, a, b, out, None)
    label = f"grouped bf16 g{len(groups)} {m}x{n}x{k}"
    return report(label, "torch.mm loop", calls, refused, args)


def _name(config: Any) -> str:
    c = config
    if isinstance(c, grouped.GroupedConfig) or c.tma:
        return c.name
    name = f"{c.block_m}x{c.block_n}x{c.block_k}-w{c.num_warps}-s{c.num_stages}"
    return name + ("-gluon" if c.gluon else "")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--out", type=Path, help="JSON file for every median (default: none)")
    p.add_argument("--fp8-tokens", default="1,16,128,2048,8192", help="LLM token counts (M)")
    p.add_argument("--only", choices=("fp8", "grouped"), help="one path only")
    p.add_argument(
        "--match",
        default="",
        help="only the candidates whose name holds this text, beside the rule's config",
    )
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--top", type=int, default=8, help="rows printed per point")
    p.add_argument(
        "--dry-run", action="store_true", help="list points and candidates, time nothing"
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tokens = [int(t) for t in args.fp8_tokens.split(",")]
    fp8_at = fp8_points(tokens) if args.only != "grouped" else []
    moe_at = moe_points() if args.only != "fp8" else []
    if args.dry_run:
        print(f"fp8: {len(fp8_at)} points x {len(fp8_candidates())} candidates: {fp8_at}")
        print(f"grouped: {len(moe_at)} points x {len(grouped_candidates())} candidates")
        return 0
    if not gemmreg.where().is_gpu:
        print("this probe times kernels on a GPU; none here (try --dry-run)", file=sys.stderr)
        return 2
    results = [probe_fp8(p, args) for p in fp8_at] + [probe_grouped(p, args) for p in moe_at]
    if args.out:
        args.out.write_text(json.dumps({"results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
