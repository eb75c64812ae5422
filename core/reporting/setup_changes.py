"""What changed under the kernels between two saved runs besides the code:
the card, the driver, torch, Triton, the power limit.

``report BEFORE AFTER`` and a history (``report RUN1 RUN2 RUN3``) judge a
step from one run's process medians to the other's, and a step is the
kernel's only if nothing else moved. In two H200 runs of December 2026
cuBLAS itself (torch 2.11.0 throughout, one driver) came out 2.6% FASTER at
8192³ fp16 from the first to the second (``report
evidence/2026-12-02-h200-host-bound-batches/r4/tuned
evidence/2026-12-02-h200-split-k-tuned-repeat/c2/tuned``): two cards, and nine commits
of gemmreg between them, none of them cuBLAS's. Cards of one model can
differ by a few percent (each power-limited, each its own silicon). The verdict stays what the figures say; a step whose two
runs differ in setup carries a note naming what differed, so that it is not
read as the commit's doing.

The card is the GPU's UUID in the manifest (NVML's record of the process's
first GPU) where every report of the run was timed on that one GPU. A
``--devices`` run over several GPUs names the set of its cards (the
manifest's ``devices``, each with its UUID where the run recorded one), and two such
runs on other sets get the note too. A Ray run, and a multi-GPU run saved
before, record no card and get no card note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen(kw_only=True)
class Setup:
    """One run's machine and software, as far as its manifest says ('' where not)."""

    card: str = ""
    """The GPU's UUID, where every report ran on that one GPU; a multi-GPU
    run's UUIDs, sorted and joined by ``+``."""
    driver: str = ""
    torch: str = ""
    triton: str = ""
    power_limit_w: str = ""
    """The enforced power limit: the H200's clocks follow it."""


def setup_of(manifest: Mapping[str, Any]) -> Setup:
    """The setup a saved run records. Never raises: an old or foreign
    manifest gives '' for what it lacks."""
    gpu = manifest.get("gpu")
    gpu = gpu if isinstance(gpu, Mapping) else {}
    devices = manifest.get("devices")
    if manifest.get("ray_nodes"):
        card = ""
    elif isinstance(devices, list) and len(devices) > 1:
        card = _cards(devices)
    else:
        card = _card(gpu.get("uuid"))
    limit = gpu.get("enforced_power_limit_w")
    return Setup(
        card=card,
        driver=_text(gpu.get("driver_version")),
        torch=_text(manifest.get("torch")),
        triton=_text(manifest.get("triton")),
        power_limit_w=f"{limit:g}" if isinstance(limit, (int, float)) else "",
    )


def _card(value: object) -> str:
    return value if isinstance(value, str) and value.startswith("GPU-") else ""


def _cards(devices: list[Any]) -> str:
    """The set of a multi-GPU run's cards, sorted and joined by ``+``; '' unless
    every device names its card."""
    cards = [_card(d.get("uuid")) if isinstance(d, Mapping) else "" for d in devices]
    return "+".join(sorted(set(cards))) if all(cards) else ""


def _short(card: str) -> str:
    return "+".join(part[:CARD_CHARS] for part in card.split("+"))


def _text(value: object) -> str:
    """A recorded version, or '' for a missing one or NVML's "unavailable: ..."."""
    if not isinstance(value, str) or value.startswith("unavailable"):
        return ""
    return value


CARD_CHARS = 12
"""A card is shown by the start of its UUID (``GPU-`` and 8 hex digits): enough to tell cards apart."""


def setup_notes(before: Setup, after: Setup) -> tuple[str, ...]:
    """One note per kind of difference between two runs' setups; none where
    either side does not say (an unknown is not a difference)."""
    notes = []
    if before.card and after.card and before.card != after.card:
        notes.append(
            f"ANOTHER CARD: before ran on {_short(before.card)}, after on "
            f"{_short(after.card)}: cards of one model can differ by a few percent, "
            "so this step may be the card's, not the code's"
        )
    software = [
        f"{name} {old} -> {new}"
        for name, old, new in (
            ("torch", before.torch, after.torch),
            ("triton", before.triton, after.triton),
            ("driver", before.driver, after.driver),
        )
        if old and new and old != new
    ]
    if software:
        notes.append(f"UNLIKE SOFTWARE: {', '.join(software)}")
    old, new = before.power_limit_w, after.power_limit_w
    if old and new and old != new:
        notes.append(f"UNLIKE POWER LIMIT: {old} W -> {new} W")
    return tuple(notes)
