"""Datasheet peak rates, to state "% of peak" and to flag impossible figures.

Dense (no sparsity) rates in TFLOP/s from the vendors' datasheets, per math
class. They are ceilings for a sanity gate, not targets: a figure above its
peak means the measurement or the kernel is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping

HOPPER_SXM: Mapping[str, float] = {
    "ieee_fp32": 66.9,
    "tf32": 494.7,
    "tf32x3": 494.7,
    "bf16x3": 989.4,
    "fp16": 989.4,
    "fp16_acc16": 989.4,
    "bf16": 989.4,
    "fp64": 66.9,  # fp64 tensor-core rate
}

PEAKS_BY_DEVICE: Mapping[str, Mapping[str, float]] = {
    "H200": HOPPER_SXM,
    "H100 80GB HBM3": HOPPER_SXM,
}
"""Keyed by a substring of the device name torch reports."""


def peak_tflops(device_name: str, math: str) -> float | None:
    """The datasheet peak for this device and math class, or None if unknown."""
    for key, table in PEAKS_BY_DEVICE.items():
        if key in device_name:
            return table.get(math)
    return None
