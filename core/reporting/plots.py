"""Pictures of a saved run: TFLOP/s against size with the process range as a
band, and a roofline view. Needs matplotlib (``pip install gemmreg[plot]``),
which the rest of gemmreg never imports.

The roofs are the datasheet peaks of the device the run's manifest names
(:mod:`gemmreg.timing.peaks`). A device with no entry there, and any CPU run, gets
no roofs and a note in the picture that says so: another GPU's roofs would
put a wrong "% of peak" in front of the reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from gemmreg.contract.traffic import ideal_bytes
from gemmreg.timing.comparing import CompareReport
from gemmreg.timing.peaks import DevicePeaks, device_peaks

if TYPE_CHECKING:  # matplotlib is optional: named for the type checker only
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

SIZE_TICK_BASE = 2
"""Size ticks at powers of two (32, 64, ... 8192): GEMM sizes are mostly there."""
RATE_TICK_STEPS = (1.0, 2.0, 5.0)
"""Rate and intensity ticks at 1, 2 and 5 times powers of ten, so that a range
inside one decade still gets labelled ticks (plain numbers, not 3x10^1)."""


def _pyplot() -> ModuleType:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("plots need matplotlib: pip install 'gemmreg[plot]'") from None
    return plt


def roofs(
    manifest: Mapping[str, object], reports: Sequence[CompareReport]
) -> tuple[DevicePeaks | None, str]:
    """The run's device's datasheet peaks, or None, and the note the picture shows."""
    name = str(manifest.get("device_name") or (reports[0].device_name if reports else ""))
    if manifest.get("backend") == "cpu":
        return None, f"CPU run ({name or 'host'}): no datasheet peaks drawn"
    peaks = device_peaks(name)
    if peaks is None:
        return None, f"no datasheet peaks known for {name or 'this device'}: none drawn"
    return peaks, f"peaks: {peaks.source}"


def plain_number(value: float, _position: object = None) -> str:
    """A tick label: 32, not 3.2x10^1; 0.05, not 5x10^-2."""
    if value >= 1 and value == round(value):
        return str(round(value))
    return f"{value:g}"


def _plain_log_axis(axis: Axis, base: int, steps: Sequence[float]) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=base, subs=tuple(steps)))
    axis.set_major_formatter(FuncFormatter(plain_number))
    axis.set_minor_formatter(NullFormatter())


def write_plots(
    directory: Path, reports: Sequence[CompareReport], manifest: Mapping[str, object]
) -> list[Path]:
    plt = _pyplot()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for dtype in sorted({r.problem.dtype for r in reports}):
        fig = figure(plt, dtype, [r for r in reports if r.problem.dtype == dtype], manifest)
        for suffix in ("png", "svg"):
            path = directory / f"sweep-{dtype}.{suffix}"
            fig.savefig(path, dpi=110)
            written.append(path)
        plt.close(fig)
    return written


def _tflops(flops: int, ms: float | None) -> float:
    """TFLOP/s of ``flops`` in ``ms`` (the points plotted all have their range)."""
    return flops / (ms * 1e-3) / 1e12 if ms else float("nan")


def figure(
    plt: ModuleType, dtype: str, chosen: Sequence[CompareReport], manifest: Mapping[str, object]
) -> Figure:
    """One dtype's picture: TFLOP/s against size, and the roofline view."""
    peaks, note = roofs(manifest, chosen)
    fig, (sweep, roof) = plt.subplots(1, 2, figsize=(13, 5))
    kernels = sorted({s.kernel for r in chosen for s in r.summaries})
    for kernel in kernels:
        points = sorted(  # by size, then label: points of one shape (layouts, forms) differ
            (
                (r.problem.flops, r.problem.label, s, r.problem)
                for r in chosen
                for s in r.summaries
                if s.kernel == kernel
                and s.status == "timed"
                and s.low_ms is not None
                and s.high_ms is not None
            ),
            key=lambda point: point[:2],
        )
        if not points:
            continue
        x = [p[0] ** (1 / 3) / 2 ** (1 / 3) for p in points]  # the cube root of MNK
        center = [p[2].tflops for p in points]
        low = [_tflops(p[3].flops, p[2].high_ms) for p in points]
        high = [_tflops(p[3].flops, p[2].low_ms) for p in points]
        line = sweep.plot(x, center, marker="o", label=f"{kernel} ({points[0][2].math})")[0]
        sweep.fill_between(x, low, high, color=line.get_color(), alpha=0.25)
        intensity = [p[3].flops / ideal_bytes(p[3]) for p in points]
        roof.scatter(intensity, center, color=line.get_color(), label=kernel)
    device = str(manifest.get("device_name") or "device")
    sweep.set(
        xscale="log",
        yscale="log",
        xlabel="size (cube root of MNK)",
        ylabel="TFLOP/s",
        title=f"{dtype}: median of process medians, band = process range",
    )
    roof.set(
        xscale="log",
        yscale="log",
        xlabel="arithmetic intensity (FLOP/byte, ideal)",
        ylabel="TFLOP/s",
        title=f"roofline, {device}"
        + (f" (slope: {peaks.memory_tb_s:g} TB/s)" if peaks else " (no roofs)"),
    )
    if peaks is not None:
        _draw_roofs(peaks, sorted({s.math for r in chosen for s in r.summaries}), sweep, roof)
    _plain_log_axis(sweep.xaxis, SIZE_TICK_BASE, (1.0,))
    for axis in (sweep.yaxis, roof.xaxis, roof.yaxis):
        _plain_log_axis(axis, 10, RATE_TICK_STEPS)
    for axes in (sweep, roof):
        legend_or_note(axes, "no kernel has a timed point with a process range")
    fig.text(0.01, 0.01, note, fontsize=8, color="dimgrey")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def legend_or_note(axes: Axes, note: str) -> None:
    """The panel's legend, or where nothing on it is labelled (no kernel
    drawn: none timed, or none with a process range) ``note`` in its middle:
    an empty panel must not read as a drawing that failed, and matplotlib
    asked for a legend of nothing only warns and draws none."""
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize=8)
        return
    axes.text(
        0.5,
        0.5,
        note,
        transform=axes.transAxes,
        ha="center",
        va="center",
        color="dimgrey",
    )


def _draw_roofs(peaks: DevicePeaks, maths: Sequence[str], sweep: Axes, roof: Axes) -> None:
    """The compute peak of each math class on both panels, and the memory slope."""
    for math in maths:
        peak = peaks.tflops(math)
        if peak:
            for axes in (sweep, roof):
                axes.axhline(
                    peak, linestyle="--", linewidth=1, label=f"{math} peak {peak:g} TFLOP/s"
                )
    xs = roof.get_xlim()
    roof.plot(
        xs,
        [x * peaks.memory_tb_s for x in xs],
        color="grey",
        linewidth=1,
        label=f"memory {peaks.memory_tb_s:g} TB/s",
    )
    roof.set_xlim(xs)
