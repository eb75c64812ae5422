"""Pictures of a saved run: TFLOP/s against size with the process range as a
band, and a roofline view. Needs matplotlib (``pip install gemmreg[plot]``),
which the rest of gemmreg never imports."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gemmreg.comparing import CompareReport
from gemmreg.peaks import peak_tflops

BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
HBM_TB_S = 4.8
"""H200 datasheet bandwidth, for the roofline's slanted roof (a lead, not a measurement)."""


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("plots need matplotlib: pip install 'gemmreg[plot]'") from None
    return plt


def write_plots(
    directory: Path, reports: Sequence[CompareReport], manifest: dict[str, Any]
) -> list[Path]:
    plt = _pyplot()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    device = manifest.get("device_name", "")
    for dtype in sorted({r.problem.dtype for r in reports}):
        chosen = [r for r in reports if r.problem.dtype == dtype]
        fig, (sweep, roof) = plt.subplots(1, 2, figsize=(13, 5))
        kernels = sorted({s.kernel for r in chosen for s in r.summaries})
        for kernel in kernels:
            points = sorted(
                (r.problem.flops, r.problem.shape, s, r.problem)
                for r in chosen
                for s in r.summaries
                if s.kernel == kernel and s.status == "timed"
            )
            if not points:
                continue
            x = [p[0] ** (1 / 3) / 2 ** (1 / 3) for p in points]  # the cube root of MNK
            center = [p[2].tflops for p in points]
            low = [p[3].flops / (p[2].high_ms * 1e-3) / 1e12 for p in points]
            high = [p[3].flops / (p[2].low_ms * 1e-3) / 1e12 for p in points]
            line = sweep.plot(x, center, marker="o", label=f"{kernel} ({points[0][2].math})")[0]
            sweep.fill_between(x, low, high, color=line.get_color(), alpha=0.25)
            intensity = [
                p[3].flops / (BYTES[dtype] * (p[3].m * p[3].k + p[3].k * p[3].n + p[3].m * p[3].n))
                for p in points
            ]
            roof.scatter(intensity, center, color=line.get_color(), label=kernel)
        sweep.set(
            xscale="log",
            yscale="log",
            xlabel="size (cube root of MNK)",
            ylabel="TFLOP/s",
            title=f"{dtype}: median of process medians, band = process range",
        )
        sweep.legend(fontsize=8)
        for math in sorted({s.math for r in chosen for s in r.summaries}):
            peak = peak_tflops(device, math)
            if peak:
                roof.axhline(peak, linestyle="--", linewidth=1, label=f"{math} peak {peak:g}")
        roof.set(
            xscale="log",
            yscale="log",
            xlabel="arithmetic intensity (FLOP/byte, ideal)",
            ylabel="TFLOP/s",
            title=f"roofline, {device or 'device'} (slope: {HBM_TB_S} TB/s)",
        )
        xs = roof.get_xlim()
        roof.plot(xs, [x * HBM_TB_S for x in xs], color="grey", linewidth=1)
        roof.legend(fontsize=8)
        fig.tight_layout()
        for suffix in ("png", "svg"):
            path = directory / f"sweep-{dtype}.{suffix}"
            fig.savefig(path, dpi=110)
            written.append(path)
        plt.close(fig)
    return written
