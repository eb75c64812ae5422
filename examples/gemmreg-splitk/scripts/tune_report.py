"""What ``tune.py`` writes: the JSON report, the table, and ``tuned.TABLE``
entries for the best config per shape class and mode (measured in every dtype)."""

from __future__ import annotations

import math
from typing import Any

from gemmreg_splitk import tuned


def summarise(groups: list[dict[str, Any]], procs: int, where: Any, elapsed: float,
              args: Any) -> dict[str, Any]:  # fmt: skip
    import torch
    import triton

    for group in groups:
        ok = [r for r in group["candidates"] if r["status"] == "ok" and r["label"] != "broken"]
        group["best"] = max(ok, key=lambda r: r["ratio"]) if ok else None
        current = [r for r in group["candidates"] if r["label"] == "current"]
        group["current"] = current[0] if current else None
    return {
        "device": where.device_name if hasattr(where, "device_name") else where.device,
        "processors": procs,
        "interpreted": where.triton_interpreted,
        "triton": triton.__version__,
        "torch": torch.__version__,
        "elapsed_s": round(elapsed, 1),
        "args": vars(args),
        "ratio": "torch.mm ms / candidate ms: above 1, the candidate is faster",
        "groups": groups,
        "suggested_table": suggest(groups, procs),
    }


def suggest(groups: list[dict[str, Any]], procs: int) -> list[str]:
    """Per (shape, mode): the config with the best geometric-mean ratio over the
    dtypes it was timed (and correct) in every one of, as a ``tuned.TABLE`` line."""
    by_point: dict[tuple[tuple[int, ...], str], list[dict[str, Any]]] = {}
    for group in groups:
        by_point.setdefault((tuple(group["shape"]), group["mode"]), []).append(group)
    lines = []
    for (shape, mode), point in by_point.items():
        ratios: dict[str, list[float]] = {}
        rows: dict[str, dict[str, Any]] = {}
        for group in point:
            for r in group["candidates"]:
                if r["status"] == "ok" and r["label"] != "broken":
                    ratios.setdefault(r["key"], []).append(r["ratio"])
                    rows[r["key"]] = r
        full = {k: v for k, v in ratios.items() if len(v) == len(point)}
        if not full:
            continue
        win = max(full, key=lambda k: math.prod(full[k]) ** (1 / len(full[k])))
        row, c = rows[win], rows[win]["config"]
        m, n, k = shape
        name = tuned.shape_class(m, n, k)
        pps = tuned.programs_per_sm(row["tiles"], c["split_k"], procs)
        fixed = mode == "splitk_atomic" and c.get("fixed_order", False)
        extra = f', reduce="{c["reduce"]}"' if mode == "splitk" or fixed else ""
        extra += ", fixed_order=True" if fixed else ""
        if (mode == "splitk" or fixed) and c["reduce"] == "tree" and c.get("fanin", 2) != 2:
            extra += f", fanin={c['fanin']}"
        extra += ", swap_ab=True" if c["swap_ab"] else ""
        extra += ", tma=True" if c.get("tma") else ""
        geo = math.prod(full[win]) ** (1 / len(full[win]))
        lead = "    " if name else "    # no shape class holds it; add one to tuned.CLASSES: "
        lines.append(
            f'{lead}("{name}", {mode == "splitk_atomic"}): Tuned(block_m={c["block_m"]}, '
            f"block_n={c['block_n']}, block_k={c['block_k']}, programs_per_sm={pps}, "
            f"num_warps={c['num_warps']}, num_stages={c['num_stages']}{extra}),"
            f"  # {m}x{n}x{k} {mode}: {geo:.3f}x torch.mm (geomean over {len(full[win])} dtypes)"
        )
    return lines


def table(report: dict[str, Any]) -> list[str]:
    head = f"{'shape':15} {'dtype':5} {'mode':13} {'best config':42} {'us':>8} {'torch us':>8} {'ratio':>7} {'current':>7} {'rejected':>8} {'skipped':>7}"
    lines = [head, "-" * len(head)]
    for g in report["groups"]:
        best, cur = g["best"], g["current"]
        rejected = sum(r["status"] == "rejected" for r in g["candidates"])
        skipped = sum(r["status"] == "skipped" for r in g["candidates"])
        cur_ratio = f"{cur['ratio']:.3f}" if cur and cur["status"] == "ok" else "-"
        shape = "x".join(map(str, g["shape"]))
        if best is None:
            lines.append(
                f"{shape:15} {g['dtype']:5} {g['mode']:13} {'(none correct and timed)':42}"
            )
            continue
        lines.append(
            f"{shape:15} {g['dtype']:5} {g['mode']:13} {best['key']:42} {best['ms'] * 1e3:8.2f} "
            f"{best['torch_ms'] * 1e3:8.2f} {best['ratio']:7.3f} {cur_ratio:>7} {rejected:8} {skipped:7}"
        )
    for g in report["groups"]:
        for r in g["candidates"]:
            if r["status"] == "rejected":
                lines.append(
                    f"rejected {'x'.join(map(str, g['shape']))} {g['dtype']} {g['mode']} {r['key']}: {r['why']}"
                )
    lines.append("suggested gemmreg_splitk/tuned.py TABLE entries:")
    lines += report["suggested_table"] or [
        "    (none: no config was correct and timed in every dtype)"
    ]
    lines.append(
        f"elapsed {report['elapsed_s']} s on {report['device']} ({report['processors']} SMs)"
    )
    return lines
