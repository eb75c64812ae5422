"""The most speedup a kernel could show over its baseline at a point: the
baseline's time over the least time the kernel's work can take on the device.

Why: a goal such as "1.3x the loop of ``torch.mm``" is worth chasing only where
it fits under the device's roofs. Where the baseline already runs at three
quarters of the datasheet's peak, no kernel can be 1.3x faster, and a table
that says so saves a search that cannot succeed. The least time is the larger
of two floors:

- **compute**: the problem's FLOPs at the datasheet peak of the kernel's own
  math class (the peak its ``% of peak`` is taken against);
- **memory**: A and B read once at the datasheet bandwidth (the memory-roof
  veto's floor, :func:`gemmreg.timing.vetoes.memory_floor_ms`).

The ceiling is generous on purpose: no kernel streams at the datasheet's
bandwidth, and a power-capped part (the H200) runs below its datasheet peak
under a GEMM's load, so the speedup a real kernel can reach is lower still.
A point with neither floor (a device without peaks, a CPU run) has no ceiling.
"""

from __future__ import annotations

import attrs
from gemmreg.contract import numbers
from gemmreg.timing.timing_records import CompareReport, Verdict
from gemmreg.timing.vetoes import memory_floor_ms

ROOFS = ("compute", "memory")


@attrs.frozen
class Ceiling:
    speedup: float
    """The baseline's time over the kernel's floor."""
    roof: str
    """Which floor binds: one of :data:`ROOFS`."""

    def text(self) -> str:
        """``1.31x compute``: the ceiling and the roof that sets it."""
        return f"{numbers.significant(self.speedup)}x {self.roof}"


def floor_ms(report: CompareReport, kernel: str) -> tuple[float, str] | None:
    """The least time ``kernel``'s call can take at ``report``'s point, and the
    roof that sets it; None where no peak is known."""
    summary = next((s for s in report.summaries if s.kernel == kernel), None)
    floors = []
    if summary is not None and summary.peak_tflops:
        floors.append((report.problem.flops / (summary.peak_tflops * 1e12) * 1e3, "compute"))
    memory = memory_floor_ms(report.problem, report.device_name)
    if memory is not None:
        floors.append((memory, "memory"))
    return max(floors) if floors else None


def speedup_ceiling(report: CompareReport, verdict: Verdict) -> Ceiling | None:
    """The ceiling on ``verdict``'s speedup (its baseline's median over its
    kernel's floor), or None without a baseline figure or a floor."""
    base = next((s for s in report.summaries if s.kernel == verdict.baseline), None)
    floor = floor_ms(report, verdict.kernel)
    if base is None or base.center_ms is None or floor is None:
        return None
    return Ceiling(base.center_ms / floor[0], floor[1])
