"""Time calls in interleaved rounds with gemmreg's own clock and print them
ranked: the timing half of the config probes (``fp8_grouped_configs.py``),
apart from which configs they name.

Each round times every call once, ``samples`` calls each through
``gemmreg.sample_ms`` (CUDA events, L2 flushed clean, the batch queued
ahead), in an order rotated and reversed from round to round; a call's
figure is the median of its rounds' medians, shown beside their spread.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from typing import Any

import gemmreg


def timed(
    calls: dict[str, Callable[[], None]], rounds: int, samples: int
) -> dict[str, list[float]]:
    """Each call's median of ``samples`` in every round, in ms, the calls
    taken in a rotated order each round (the report takes their median, and
    shows their spread: a figure that moves between rounds is not a rank)."""
    names = list(calls)
    medians: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        turn = names[r % len(names) :] + names[: r % len(names)]
        for name in turn if r % 2 == 0 else reversed(turn):
            medians[name].append(statistics.median(gemmreg.sample_ms(calls[name], samples)))
    return medians


def agrees(out: Any, reference: Any) -> bool:
    """C within 2% of the reference's largest magnitude everywhere: a wrong
    tile, scale or member is far outside it; rounding is far inside."""
    scale = float(reference.float().abs().max()) or 1.0
    return float((out.float() - reference.float()).abs().max()) <= 0.02 * scale


def report(
    label: str, reference: str, calls: dict[str, Callable[[], None]], refused: dict[str, str],
    args: argparse.Namespace,
) -> dict[str, Any]:  # fmt: skip
    for call in calls.values():  # compiled and warm before any sample
        call()
    rounds = timed(calls, args.rounds, args.samples)
    medians = {name: statistics.median(values) for name, values in rounds.items()}
    base = medians[reference]
    print(f"\n{label}: {len(calls) - 1} configs timed, {len(refused)} refused")
    for name, ms in sorted(medians.items(), key=lambda item: item[1])[: args.top]:
        spread = f"{min(rounds[name]) * 1e3:.1f}-{max(rounds[name]) * 1e3:.1f}"
        print(f"  {name:32s} {ms * 1e3:10.1f} us  {base / ms:6.3f}x  rounds {spread} us")
    for name, why in refused.items():
        if "(rule)" in name:
            print(f"  {name}: REFUSED {why}")
    sys.stdout.flush()
    return {
        "point": label,
        "reference": reference,
        "ms": medians,
        "rounds_ms": rounds,
        "refused": refused,
    }
