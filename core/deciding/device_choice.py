"""``--devices``: which GPUs of this host a command spreads its work over.

``all`` or comma-separated indices in torch's numbering (``0,1``); a single
index is one GPU, as with no option but pinned. Checked against the devices
that exist by :func:`gemmreg.running.devices.resolve`, once torch can say.
"""

from __future__ import annotations

from typing import Literal

from gemmreg.deciding.options import UsageError

ALL: Literal["all"] = "all"
DeviceChoice = Literal["all"] | tuple[int, ...]
"""``all``, or the indices named, in the order named."""


def parse_devices(value: str) -> DeviceChoice:
    """``all`` or ``0,1,...``: one clear line for anything else."""
    text = value.strip()
    if text.lower() == ALL:
        return ALL
    parts = [part.strip() for part in text.split(",")]
    if not text or not all(part.isascii() and part.isdigit() for part in parts):
        raise UsageError(f"--devices takes 'all' or GPU indices such as 0,1; got {value!r}")
    indices = tuple(int(part) for part in parts)
    if len(set(indices)) != len(indices):
        raise UsageError(f"--devices names a device twice: {value!r}")
    return indices
