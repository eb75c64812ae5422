"""A point's results in a few lines, printed the moment it finishes.

A sweep saves its run after every point; when a save failed (a full disk),
the point's figures lived only in that save and were lost. Printed first,
each point's figures survive whatever happens to the storage after them.
"""

from __future__ import annotations

from gemmreg.contract.numbers import significant, span
from gemmreg.reporting.render_compare import verdict_lines
from gemmreg.timing.process_outliers import outlier_note
from gemmreg.timing.timing_records import CompareReport, KernelSummary


def point_lines(report: CompareReport, label: str = "") -> list[str]:
    """Each kernel's figure (or status and why not), then each verdict."""
    lines = [f"  {label}result: {summary_text(s)}" for s in report.summaries]
    return lines + [f"  {label}{line.strip()}" for line in verdict_lines(report)]


def summary_text(s: KernelSummary) -> str:
    """``kernel: 1.234 ms (1.2 to 1.3) 5.6 TFLOP/s 71.2 GB/s ideal traffic``,
    then its OUTLIER note if it has one; or ``kernel: STATUS: why``."""
    if s.status != "timed" or s.center_ms is None:
        why = s.reason.strip().splitlines()[0] if s.reason.strip() else ""
        return f"{s.kernel}: {s.status.upper()}" + (f": {why}" if why else "")
    low, high = s.low_ms, s.high_ms
    spread = f" ({span(low, high, 5)})" if low is not None and high is not None else ""
    tflops = f" {significant(s.tflops, 4)} TFLOP/s" if s.tflops is not None else ""
    if s.ideal_gbps is not None:
        tflops += f" {significant(s.ideal_gbps, 4)} GB/s ideal traffic"
    outlier = outlier_note(s.outlier_medians_ms, s.center_ms)
    figures = f"{s.kernel}: {significant(s.center_ms, 5)} ms{spread}{tflops}"
    return f"{figures}; {outlier}" if outlier else figures
