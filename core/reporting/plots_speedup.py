"""The speedup picture of a saved run (``report RUN --plot``): for each dtype,
each kernel's speedup over a baseline kernel at every point (baseline time /
kernel time, so above 1 is faster), its interval across processes as error
bars, and the line at 1.0. The figures are the run's verdicts: a pair judged
the other way round is turned over (speedup 1/s, interval (1/high, 1/low)),
never recomputed from medians."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from gemmreg.contract import batching
from gemmreg.reporting.plots import SIZE_TICK_BASE, _plain_log_axis, _pyplot
from gemmreg.timing.timing_records import CompareReport, Verdict

if TYPE_CHECKING:  # matplotlib is optional: named for the type checker only
    from matplotlib.figure import Figure


class NoSuchBaseline(ValueError):
    """A baseline that no verdict of the run names: one line."""


def default_baseline(reports: Sequence[CompareReport]) -> str | None:
    """The kernel most verdicts with a figure were judged against (the first
    named in the command that was timed), or None for a run without them."""
    counts = Counter(v.baseline for r in reports for v in r.verdicts if v.speedup is not None)
    return counts.most_common(1)[0][0] if counts else None


def speedup_of(
    verdict: Verdict, baseline: str
) -> tuple[str, float, tuple[float, float] | None] | None:
    """(other kernel, speedup over ``baseline``, its interval), or None."""
    if verdict.speedup is None or baseline not in (verdict.baseline, verdict.kernel):
        return None
    if verdict.baseline == baseline:
        return verdict.kernel, verdict.speedup, verdict.interval
    low_high = verdict.interval
    turned = (1 / low_high[1], 1 / low_high[0]) if low_high else None
    return verdict.baseline, 1 / verdict.speedup, turned


def write_speedup_plots(
    directory: Path, reports: Sequence[CompareReport], baseline: str | None = None
) -> list[Path]:
    """``speedup-DTYPE.png`` and ``.svg`` for each dtype with a verdict over
    the baseline (chosen, else each dtype's default); none without verdicts."""
    named = {name for r in reports for v in r.verdicts for name in (v.baseline, v.kernel)}
    if baseline is not None and baseline not in named:
        raise NoSuchBaseline(
            f"--baseline {baseline}: no verdict of this run names it "
            f"(its kernels: {', '.join(sorted(named)) or 'none'})"
        )
    plt = _pyplot()
    written = []
    for dtype in sorted({r.problem.dtype for r in reports}):
        chosen = [r for r in reports if r.problem.dtype == dtype]
        over = baseline or default_baseline(chosen)
        if over is None or not any(speedup_of(v, over) for r in chosen for v in r.verdicts):
            continue
        directory.mkdir(parents=True, exist_ok=True)
        fig = figure(plt, dtype, chosen, over)
        for suffix in ("png", "svg"):
            path = directory / f"speedup-{dtype}.{suffix}"
            fig.savefig(path, dpi=110)
            written.append(path)
        plt.close(fig)
    return written


def form_of(report: CompareReport) -> str:
    """What the point is besides its size: number format, layout, batch or
    groups (``bf16-transposedB``). Points of two forms are two series: one
    line through a row-major and a transposed point of one size would read
    as one kernel's speedup moving with size."""
    problem = report.problem
    return batching.labelled(problem, f"{problem.number_format}-{problem.layout}")


Series = dict[tuple[str, str], list[tuple[float, float, tuple[float, float] | None]]]
"""(kernel, form) -> (size, speedup, interval) of each point."""


def figure(plt: ModuleType, dtype: str, reports: Sequence[CompareReport], baseline: str) -> Figure:
    """Each (kernel, form) is a series; its points are joined by a line only
    where no two share a size (a sweep of squares): the shapes of a model
    (1x14336x4096 beside 1x4096x14336) share a size, and a line through
    them would draw a trend that is not there."""
    fig, axes = plt.subplots(figsize=(8, 5))
    series: Series = {}
    for report in reports:
        size = (report.problem.m * report.problem.n * report.problem.k) ** (1 / 3)
        for verdict in report.verdicts:
            found = speedup_of(verdict, baseline)
            if found is not None:
                key = (found[0], form_of(report))
                series.setdefault(key, []).append((size, found[1], found[2]))
    forms = {form for _, form in series}
    for (kernel, form), points in sorted(series.items()):
        points.sort(key=lambda p: p[0])
        x, y = [p[0] for p in points], [p[1] for p in points]
        below = [s - (p[2][0] if p[2] else s) for p, s in zip(points, y, strict=True)]
        above = [(p[2][1] if p[2] else s) - s for p, s in zip(points, y, strict=True)]
        maths = sorted({s.math for r in reports for s in r.summaries if s.kernel == kernel})
        label = f"{kernel} ({', '.join(maths)})" if maths else kernel  # unlike math, seen
        label += f" {form}" if len(forms) > 1 else ""
        joined = len(set(x)) == len(x)
        axes.errorbar(
            x,
            y,
            yerr=[below, above],
            marker="o",
            capsize=3,
            label=label,
            linestyle="-" if joined else "none",
        )
    axes.axhline(1.0, color="black", linewidth=1, label=f"{baseline} (1.0)")
    axes.set(
        xscale="log",
        xlabel="size (cube root of MNK)",
        ylabel=f"speedup over {baseline} (above 1: faster)",
        title=f"{dtype}: speedup over {baseline}, error bars = the verdict's interval",
    )
    if series:
        _plain_log_axis(axes.xaxis, SIZE_TICK_BASE, (1.0,))
    axes.legend(fontsize=8)
    fig.tight_layout()
    return fig
