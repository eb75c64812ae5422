"""The picture of ``report RUN1 RUN2 RUN3 ... --plot``: for each device model,
each problem's time per run (oldest on the left, labelled by commit), the
process range as error bars, and the steps judged a regression marked.
Runs on different device models get different files: never one axis."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from gemmreg.reporting.history import Trend
from gemmreg.reporting.plots import _pyplot, legend_or_note
from gemmreg.reporting.render_history import short_commit

if TYPE_CHECKING:  # matplotlib is optional: named for the type checker only
    from matplotlib.figure import Figure


PANEL_SIZE = (7.0, 3.2)
"""Inches of one problem's panel: wide enough for a dozen commit labels."""


def slug(text: str) -> str:
    """A device model as a file name: ``NVIDIA H200`` -> ``nvidia-h200``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "device"


def write_history_plots(directory: Path, history: Sequence[Trend]) -> list[Path]:
    plt = _pyplot()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for device in dict.fromkeys(t.device for t in history):
        fig = figure(plt, device, [t for t in history if t.device == device])
        for suffix in ("png", "svg"):
            path = directory / f"history-{slug(device)}.{suffix}"
            fig.savefig(path, dpi=110)
            written.append(path)
        plt.close(fig)
    return written


def figure(plt: ModuleType, device: str, trends: Sequence[Trend]) -> Figure:
    """One device's trend: a panel per problem, a line per kernel."""
    problems = list(dict.fromkeys(t.problem for t in trends))
    fig, axes = plt.subplots(
        len(problems),
        1,
        figsize=(PANEL_SIZE[0], PANEL_SIZE[1] * len(problems)),
        squeeze=False,
    )
    runs = list(dict.fromkeys((p.timestamp, p.run, p.commit) for t in trends for p in t.points))
    runs.sort(key=lambda r: (r[0] == "", r[0]))
    position = {run[1]: index for index, run in enumerate(runs)}
    for panel, problem in zip(axes[:, 0], problems, strict=True):
        for trend in (t for t in trends if t.problem == problem):
            timed = [p for p in trend.points if p.summary.center_ms is not None]
            if not timed:
                continue
            x = [position[p.run] for p in timed]
            y = [p.summary.center_ms or 0.0 for p in timed]
            below = [c - (p.summary.low_ms or c) for p, c in zip(timed, y, strict=True)]
            above = [(p.summary.high_ms or c) - c for p, c in zip(timed, y, strict=True)]
            panel.errorbar(x, y, yerr=[below, above], marker="o", capsize=3, label=trend.kernel)
            bad = [
                (xi, yi)
                for xi, yi, p in zip(x, y, timed, strict=True)
                if p.change and p.change.regression
            ]
            if bad:
                panel.scatter(
                    [b[0] for b in bad],
                    [b[1] for b in bad],
                    s=120,
                    facecolors="none",
                    edgecolors="red",
                    linewidths=2,
                    zorder=5,
                    label=f"{trend.kernel}: regression",
                )
        panel.set_xticks(range(len(runs)))
        panel.set_xticklabels(
            [short_commit(r[2]) for r in runs], rotation=30, ha="right", fontsize=8
        )
        panel.set(ylabel="ms (median, process range)", title=f"{device}: {problem}")
        legend_or_note(panel, "no kernel was timed at this problem in these runs")
    fig.tight_layout()
    return fig
