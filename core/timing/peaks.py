"""Peak rates of a device, to state "% of peak", to flag impossible figures
and to draw the roofs of a saved run's plots: the user's entries first
(:mod:`gemmreg.timing.peaks_file`, ``GEMMREG_PEAKS``), then the datasheet
table (:mod:`gemmreg.timing.peaks_table`). A device in neither has no
peaks: no "% of peak", no gate and no roof lines, rather than another GPU's.
"""

from __future__ import annotations

import re

from gemmreg.timing.peaks_file import PEAKS_ENV as PEAKS_ENV
from gemmreg.timing.peaks_file import PeaksFileError as PeaksFileError
from gemmreg.timing.peaks_file import user_devices
from gemmreg.timing.peaks_table import DEVICES as DEVICES
from gemmreg.timing.peaks_table import DevicePeaks as DevicePeaks


def device_peaks(device_name: str) -> DevicePeaks | None:
    """The entry for the device torch names so (the user's, else the
    datasheet's), or None if unknown."""
    for device in (*user_devices(), *DEVICES):
        if re.search(device.pattern, device_name, flags=re.IGNORECASE):
            return device
    return None


def peak_tflops(device_name: str, math: str) -> float | None:
    """The peak for this device and math class, or None if unknown."""
    device = device_peaks(device_name)
    return device.tflops(math) if device is not None else None
