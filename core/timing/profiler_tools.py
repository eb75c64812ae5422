"""The profilers ``compare --ncu`` and ``--nsys`` run one kernel under, decided
before any work starts: where each tool is, whether it can run here, and the
command a worker runs under.

After its timing, a comparison can hand ONE kernel to Nsight Compute (or
Nsight Systems) in a fresh worker, with the comparison's problem and seed, so
the inputs are the ones timed. The worker prepares the kernel and calls it
past its warm-up, all outside the profiled range, and only then opens the
CUDA profiler range (``cudaProfilerStart``) for :data:`CAPTURE_CALLS` calls:
the tool is told to profile that range alone (``--profile-from-start off``,
``--capture-range=cudaProfilerApi``). Counting launches to skip instead
(``--launch-skip``) would depend on how many kernels a plugin's prepare
launches: an autotuner launches every configuration it tries.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from gemmreg.instruments import cuda_tools

PROFILERS: Final[tuple[str, ...]] = ("ncu", "nsys")
"""The tools, by their executables' names: Nsight Compute and Nsight Systems."""
PROFILING_ENV: Final = "GEMMREG_PROFILING"
"""Set to the tool's name in the profiled worker: it then exits normally, so
the tool sees the process end (the quick exit skips the teardown)."""
FALLBACK_ROOTS: tuple[str, ...] = ("/usr/local/cuda",)
"""Where the CUDA toolkit usually is when the tool is not on PATH."""

CAPTURE_WARMUP_CALLS: Final = 3
"""Calls after the prepare and first call, outside the profiled range: what is
profiled is a warm call, as the timing saw it, not the first one."""
CAPTURE_CALLS: Final = 1
"""Calls inside the profiled range. One: each of Nsight Compute's sections
replays every kernel it profiles several times already."""
NCU_LAUNCH_COUNT: Final = 8
"""At most this many kernel launches are profiled: a plugin whose call is
several kernels (a split-K and its reduction) gets them all, a plugin that
launches hundreds cannot make the pass take minutes."""
NCU_SECTIONS: Final[tuple[str, ...]] = ("SpeedOfLight", "LaunchStats", "Occupancy")
"""A short section set: throughput against the peaks, the launch's shape and
its occupancy. The full set replays each kernel about forty times."""
PROFILER_TASK_TIMEOUT_S: Final = 600.0
"""A worker under a profiler starts slower and replays the profiled kernel."""

ROCM_REASON = "is NVIDIA-only; on ROCm use rocprof by hand"


def locate(tool: str) -> Path | None:
    """The tool on PATH, else under $CUDA_HOME/bin or /usr/local/cuda/bin."""
    return cuda_tools.locate(tool, FALLBACK_ROOTS)


def missing_reason(tool: str) -> str | None:
    """Why ``--TOOL`` cannot run (the tool is nowhere to be found), or None."""
    if locate(tool) is not None:
        return None
    where = "Nsight Compute" if tool == "ncu" else "Nsight Systems"
    return (
        f"--{tool}: {tool} not found (looked on PATH, in $CUDA_HOME/bin and "
        f"/usr/local/cuda/bin); it comes with {where} and the CUDA toolkit"
    )


def file_stem(tool: str, kernel: str, point: str = "") -> str:
    """``TOOL-KERNEL``, and ``-POINT`` (the problem's label) for one point of
    a sweep (``bench --ncu``), so each point's files sit side by side."""
    return f"{tool}-{kernel}-{point}" if point else f"{tool}-{kernel}"


def report_path(out_dir: Path, tool: str, kernel: str, point: str = "") -> Path:
    """Where the tool's own report goes: ``STEM.ncu-rep`` or ``STEM.nsys-rep``."""
    return out_dir / f"{file_stem(tool, kernel, point)}.{tool}-rep"


def command(tool: str, executable: Path | str, report: Path, log: Path) -> list[str]:
    """The prefix the profiled worker runs under. Clocks are never locked
    (``--clock-control none``): the lab's rule, and the timing ran at the
    clocks the GPU chose."""
    if tool == "ncu":
        sections = [arg for name in NCU_SECTIONS for arg in ("--section", name)]
        return [
            str(executable),
            "--clock-control",
            "none",
            "--profile-from-start",
            "off",
            "--launch-count",
            str(NCU_LAUNCH_COUNT),
            "--target-processes",
            "application-only",
            *sections,
            "--export",
            str(report),
            "--force-overwrite",
            "--log-file",
            str(log),
        ]
    return [
        str(executable),
        "profile",
        "--capture-range=cudaProfilerApi",
        "--capture-range-end=stop",
        "--trace=cuda,nvtx",
        "--sample=none",
        "--force-overwrite=true",
        "--output",
        str(report.with_suffix("")),
    ]


def summary_command(tool: str, executable: Path | str, report: Path) -> list[str]:
    """The command that prints the report's summary as CSV."""
    if tool == "ncu":
        return [str(executable), "--import", str(report), "--page", "details", "--csv"]
    return [
        str(executable),
        "stats",
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
        "--force-export=true",
        str(report),
    ]


SUMMARY_NAME_COLUMNS: Final[dict[str, str]] = {"ncu": "Kernel Name", "nsys": "Name"}
"""The column of each tool's CSV summary that names the kernel a row is about."""


def profiled_kernels(tool: str, summary_csv: str) -> list[str]:
    """The distinct kernel names in a tool's CSV summary, in order of first
    appearance; empty when the CSV has no such column (or no rows)."""
    column = SUMMARY_NAME_COLUMNS[tool]
    lines = summary_csv.splitlines()
    start = next((i for i, line in enumerate(lines) if f'"{column}"' in line), None)
    if start is None:  # ncu and nsys print notes above the header at times
        return []
    names: dict[str, None] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        name = (row.get(column) or "").strip()
        if name:
            names[name] = None
    return list(names)


def base_name(name: str) -> str:
    """A kernel's bare function name, so two tools' spellings of one kernel
    compare equal: CUPTI reports ``void ns::kern<T, 4>(Params)``, Nsight
    Compute by default ``kern``; Triton kernels are plain names in both."""
    depth, bare = 0, []
    for char in name:  # template arguments and the parameter list go
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            bare.append(char)
    words = "".join(bare).split()
    last = words[-1] if words else name
    return last.rsplit("::", 1)[-1] or name


def kernels_mismatch(profiled: Sequence[str], timed: Sequence[str]) -> str | None:
    """Why a profile is not of the code that was timed, or None when the
    kernels it captured are the ones the timed calls launched. A plugin that
    chooses its config at run time (an autotuner, a heuristic on free
    memory) can launch another kernel in the profiling worker; its report
    would then describe code the verdict never measured."""
    got = {base_name(n) for n in profiled}
    want = {base_name(n) for n in timed}
    if got == want:
        return None
    if not got:
        return "the profiler's summary names no kernel"
    return (
        f"the profile is of {', '.join(sorted(got))}, but the timed calls launched "
        f"{', '.join(sorted(want))}: not the code that was timed"
    )


def version(executable: Path) -> str:
    """The tool's version line, for the manifest."""
    return cuda_tools.version(executable, _last_line)


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1][-200:] if lines else "unknown (no output)"
