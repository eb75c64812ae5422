"""``compare --ncu [KERNEL]`` and ``--nsys [KERNEL]`` (and ``bench``'s, at
every point of the sweep): the options, their checks before any work, and
the profiled runs after the timing (:mod:`gemmreg.timing.profiler_capture`)."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gemmreg.contract.options import UsageError

if TYPE_CHECKING:
    from gemmreg.timing.timing_records import CompareReport
    from gemmreg.workers.devices import Device


def add_options(parser: argparse.ArgumentParser) -> None:
    from gemmreg.timing import profiler_tools

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
            f"report and CSV summary go to the run folder's profiler/ (bench: at every "
            f"point where the kernel was timed, after the sweep). Name plugins "
            f"before it, or write --{tool}=KERNEL",
        )


def chosen(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(tool, kernel) for each profiler asked for, checked before any work:
    the kernel is one of the compared, the tool is installed."""
    from gemmreg.timing import profiler_tools

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


def refuse_with_ray(ray_address: str | None, picked: list[tuple[str, str]]) -> None:
    """A profiler runs here, after the timing; with ``--ray`` the timing ran on
    other machines, whose GPUs and caches this one does not have."""
    if ray_address is not None and picked:
        raise UsageError(f"--ray and --{picked[0][0]}: profile on one machine, without --ray")


def refuse_on(backend_kind: str, picked: list[tuple[str, str]]) -> None:
    """Nsight runs on NVIDIA GPUs alone (checked once the backend is known)."""
    from gemmreg.timing import profiler_tools

    if backend_kind == "rocm" and picked:
        raise UsageError(f"--{picked[0][0]} {profiler_tools.ROCM_REASON}")


def worker_env(kept: Path, chosen: Sequence[Device]) -> dict[str, str]:
    """The profiled worker's environment: the caches the timed processes
    shared, kept under ``kept`` (``compare``'s ``keep_cache``), and the GPU
    the first of them ran on (``--device``/``--devices``)."""
    from gemmreg.timing import worker_pool
    from gemmreg.workers import devices

    env = worker_pool.shared_cache_env(kept)
    return devices.pin_device_env(env, chosen[0]) if chosen else env


def run_after(
    picked: list[tuple[str, str]],
    report: CompareReport,
    manifest: dict[str, Any],
    out: Path | None,
    progress: Callable[[str], None],
    env: dict[str, str] | None = None,
    per_point: bool = False,
) -> None:
    """Each profiler asked for, on its kernel, at the report's problem and
    seed; recorded in ``manifest["profilers"]``. ``env``: the timed
    processes' GPU and caches (:func:`worker_env`). ``per_point``: the
    files' names carry the point (a comparison at several dtypes)."""
    from gemmreg.timing import profiler_capture

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
            tool,
            kernel,
            report.problem,
            report.seed,
            run_dir,
            env=env,
            timed_kernels=timed,
            per_point=per_point,
        )
        manifest.setdefault("profilers", []).append(entry)
        where = ", ".join(str(run_dir / f) for f in entry.get("files", {}).values())
        if entry["status"] == "ok":
            progress(f"{tool}: {kernel} profiled: {where}")
        else:
            progress(
                f"gemmreg: {tool}: {kernel}: {entry['reason']}" + (f" ({where})" if where else "")
            )


def run_after_sweep(
    picked: list[tuple[str, str]], out: Path, progress: Callable[[str], None]
) -> None:
    """``bench --ncu``: each profiler on its kernel at every point where the
    kernel was timed, on the GPU the point ran on, after the whole sweep (a
    profiler never shares the GPU with a timing); the run saved again with
    the entries in ``manifest["profilers"]``. The sweep's workers used the
    user's own caches, so the profiled worker finds the choices they made."""
    import os

    from gemmreg.fanout import sweeping
    from gemmreg.reporting import runs
    from gemmreg.timing import profiler_capture
    from gemmreg.workers import devices

    if not picked:
        return
    manifest, reports, partial = runs.load_run(out)
    if partial:
        progress("profilers skipped: the sweep was interrupted")
        return
    entries = manifest.setdefault("profilers", [])
    for tool, kernel in picked:
        for report in reports:
            summary = next((s for s in report.summaries if s.kernel == kernel), None)
            if summary is None or summary.status != "timed":
                continue
            env = dict(os.environ)
            if devices.pinned_index() is None and report.device_index is not None:
                env = devices.pin_device_env(env, report.device_index)
            progress(f"{tool}: profiling {kernel} at {report.problem.label}")
            entry = profiler_capture.run_profiler(
                tool,
                kernel,
                report.problem,
                report.seed,
                out,
                env=env,
                timed_kernels=summary.device_kernels,
                per_point=True,
            )
            entries.append(entry)
            if entry["status"] != "ok":
                progress(f"gemmreg: {tool}: {kernel} at {report.problem.label}: {entry['reason']}")
    sweeping.save(out, manifest, reports, partial)
    done = sum(e["status"] == "ok" for e in entries)
    progress(f"profilers: {done} of {len(entries)} profiles ok, in {out / 'profiler'}/")
