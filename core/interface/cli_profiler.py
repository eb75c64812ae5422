"""``compare --ncu [KERNEL]`` and ``--nsys [KERNEL]``: the options, their
checks before any work, and the profiled run after the timing
(:mod:`gemmreg.running.profiler_capture`)."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gemmreg.deciding.options import UsageError


def add_options(parser: argparse.ArgumentParser) -> None:
    from gemmreg.deciding import profiler_tools

    for tool in profiler_tools.PROFILERS:
        what = "Nsight Compute" if tool == "ncu" else "Nsight Systems"
        parser.add_argument(
            f"--{tool}",
            nargs="?",
            const="",
            default=None,
            metavar="KERNEL",
            help=f"after the timing, run one kernel (default: the first named) once more "
            f"under {what} with the same problem, seed and inputs, clocks unlocked; its "
            f"report and CSV summary go to the run folder's profiler/. Name plugins "
            f"before it, or write --{tool}=KERNEL",
        )


def chosen(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(tool, kernel) for each profiler asked for, checked before any work:
    the kernel is one of the compared, the tool is installed."""
    from gemmreg.deciding import profiler_tools

    picked = []
    for tool in profiler_tools.PROFILERS:
        value = getattr(args, tool, None)
        if value is None:
            continue
        kernel = value.strip() or args.names[0]
        if kernel not in args.names:
            raise UsageError(
                f"--{tool} {kernel}: not one of the kernels compared ({', '.join(args.names)})"
            )
        reason = profiler_tools.missing_reason(tool)
        if reason:
            raise UsageError(reason)
        picked.append((tool, kernel))
    return picked


def refuse_on(backend_kind: str, picked: list[tuple[str, str]]) -> None:
    """Nsight runs on NVIDIA GPUs alone (checked once the backend is known)."""
    from gemmreg.deciding import profiler_tools

    if backend_kind == "rocm" and picked:
        raise UsageError(f"--{picked[0][0]} {profiler_tools.ROCM_REASON}")


def worker_env(kept: Path, chosen: Sequence[Any]) -> dict[str, str]:
    """The profiled worker's environment: the caches the timed processes
    shared, kept under ``kept`` (``compare``'s ``keep_cache``), and the GPU
    the first of them ran on (``--device``/``--devices``)."""
    from gemmreg.running import devices, worker_pool

    env = worker_pool.shared_cache_env(kept)
    return devices.pin_device_env(env, chosen[0]) if chosen else env


def run_after(
    picked: list[tuple[str, str]],
    report: Any,
    manifest: dict[str, Any],
    out: Path | None,
    progress: Callable[[str], None],
    env: dict[str, str] | None = None,
) -> None:
    """Each profiler asked for, on its kernel, at the report's problem and
    seed; recorded in ``manifest["profilers"]``. ``env``: the timed
    processes' GPU and caches (see :func:`kept_cache`)."""
    from gemmreg.running import profiler_capture

    if not picked:
        return
    if report.partial:
        progress("profilers skipped: the timing was interrupted")
        return
    run_dir = out if out is not None else Path(tempfile.mkdtemp(prefix="gemmreg-profile-"))
    for tool, kernel in picked:
        progress(f"{tool}: profiling {kernel} at {report.problem.label} (seed {report.seed})")
        timed = next((s.device_kernels for s in report.summaries if s.kernel == kernel), ())
        entry = profiler_capture.run_profiler(
            tool, kernel, report.problem, report.seed, run_dir, env=env, timed_kernels=timed
        )
        manifest.setdefault("profilers", []).append(entry)
        where = ", ".join(str(run_dir / f) for f in entry.get("files", {}).values())
        if entry["status"] == "ok":
            progress(f"{tool}: {kernel} profiled: {where}")
        else:
            progress(
                f"gemmreg: {tool}: {kernel}: {entry['reason']}" + (f" ({where})" if where else "")
            )
