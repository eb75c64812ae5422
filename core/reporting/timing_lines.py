"""The lines a timing run prints as it goes: one per process and per cold
start, and one when a sequential run adds a batch; on ``compare``'s meter
(whose items they count) or as plain progress lines (``bench``)."""

from __future__ import annotations

from collections.abc import Callable

from gemmreg.reporting.progress import Meter
from gemmreg.timing.timing_options import TimingOptions
from gemmreg.timing.timing_records import ColdStart, ProcessRun

Progress = Callable[[str], None]
"""Where the progress lines go (the command line's stderr)."""


def batch_hook(
    progress: Progress, label: str = "", meter: Meter | None = None
) -> Callable[[int, int, int], None]:
    """A line when a sequential run adds a batch; ``meter`` (counting process
    runs: ``compare``) expects the batch's runs too."""

    def on_batch(look: int, added: int, kernels: int) -> None:
        line = f"  {label}look {look} left a pair undecided: {added} more processes"
        if meter is not None:
            meter.more([1.0] * (added * kernels))
            meter.line(line)
        else:
            progress(line)

    return on_batch


def progress_hooks(
    timing: TimingOptions, progress: Progress, label: str = "", meter: Meter | None = None
) -> tuple[Callable[[ProcessRun], None], Callable[[ColdStart], None]]:
    """A progress line per process and per cold start; ``meter``: each
    process's line counts as one of its items (``compare``)."""

    def on_run(run: ProcessRun) -> None:
        if run.median_ms is not None:
            detail = (
                f"median {run.median_ms:.4g} ms over {len(run.round_ms)} rounds, "
                f"{run.samples} samples, {run.exposure_s:.2f} s exposed"
            )
        else:
            detail = run.reason.splitlines()[0] if run.reason else ""
        of = "" if timing.budget_s is not None else f"/{timing.processes}"  # sequential: open
        line = f"  {label}process {run.process + 1}{of}: {run.kernel}: {run.status} {detail}"
        if meter is not None:
            meter.advance(1.0, line)
        else:
            progress(line)

    def on_cold(cold: ColdStart) -> None:
        detail = cold.reason.splitlines()[0] if cold.reason else ""
        if cold.prepare_s is not None and cold.first_call_s is not None:
            detail = f"prepare {cold.prepare_s:.3g} s, first call {cold.first_call_s:.3g} s"
        progress(f"  {label}cold start: {cold.kernel}: {cold.status} {detail}".rstrip())

    return on_run, on_cold
