"""What the two cluster probes' runners share (``tf32_cluster.py``,
``f16_cluster.py``): the persistent grid sized to the clusters that run at
once, the error measure, the repeat check, and the interleaved rounds that
time every candidate against a baseline. Host side only: torch, Triton's
driver and gemmreg's clock, imported where used.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from typing import Any

SLOTS: dict[str, int] = {}
"""Per form, the clusters of two that run at once (the driver's occupancy)."""
REPEATS = 5
"""Calls after the first whose C must equal its C bit for bit."""


def half_the_sms() -> int:
    import torch

    return torch.cuda.get_device_properties(0).multi_processor_count // 2


def persistent_call(launch: Callable[[int], Any], pairs: int, form: str) -> Callable[[], None]:
    """``call()`` launching ``launch(programs)`` with one program a cluster, as
    many as run at once (the driver's count for ``form``'s compiled kernel,
    read after its first launch and kept in ``SLOTS``), at most ``pairs``."""
    import triton

    programs = min(pairs, SLOTS.get(form, half_the_sms()))
    compiled = launch(programs)
    if form not in SLOTS:  # as many clusters as the driver says run at once
        SLOTS[form] = triton.runtime.driver.active.utils.cuOccupancyMaxActiveClusters(
            compiled.function, compiled.metadata.shared, 2
        )
        programs = min(pairs, SLOTS[form])
    return lambda: launch(programs)


def error_share(c: Any, a: Any, b: Any) -> float:
    """max |c - A@B| / (|A|@|B|), A@B in float64."""
    exact = a.double() @ b.double()
    scale = a.double().abs() @ b.double().abs()
    return float(((c.double() - exact).abs() / scale.clamp_min(1e-30)).max())


def first_and_repeats(call: Callable[[], None], out: Any) -> tuple[Any, bool]:
    """C of the first call, and whether ``REPEATS`` more (``out`` refilled with
    NaN before each) wrote it again bit for bit."""
    import torch

    call()
    first = out.clone()
    same = True
    for _ in range(REPEATS):
        out.fill_(float("nan"))
        call()
        same = same and bool(torch.equal(out, first))
    return first, same


def interleaved_rounds(
    candidates: Mapping[str, Callable[[], Any]], baseline: str, rounds: int, calls: int
) -> tuple[dict[str, list[float]], dict[str, dict[str, float]]]:
    """Each candidate's median of ``calls`` samples on gemmreg's clock
    (``gemmreg.sample_ms``) in each of ``rounds`` rounds, every round in a
    Williams order (``gemmreg.williams_rows``); then per candidate its median
    time and the baseline's time over its own in the same round (median,
    lowest, highest). Two calls each first, outside the rounds."""
    import gemmreg
    import torch

    for call in candidates.values():
        call()
        call()
    torch.cuda.synchronize()
    names = list(candidates)
    order = gemmreg.williams_rows(len(names))
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for i in order[r % len(order)]:
            times[names[i]].append(
                statistics.median(gemmreg.sample_ms(candidates[names[i]], calls))
            )
    ratios = {
        name: [c / t for c, t in zip(times[baseline], times[name], strict=True)] for name in names
    }
    summary = {
        name: {"median_ms": statistics.median(times[name]),
               "speedup_median": statistics.median(ratios[name]),
               "speedup_low": min(ratios[name]), "speedup_high": max(ratios[name])}
        for name in names
    }  # fmt: skip
    return times, summary
