"""What a result was measured on: the manifest kept beside every figure.

It is enough to tell two runs apart and to replay one: versions, device,
clocks where they can be read, the precision flags the core pinned, a hash of
every kernel source, plugin origins, seeds and the exact command.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from gemmreg.contract import backend
from gemmreg.contract.version import __version__
from gemmreg.discovery.registry import RegisteredKernel

COMMIT_ENV = "GEMMREG_GIT_COMMIT"
"""The commit measured, when the caller knows it better than git can: a copied
tree (a GPU machine's copy, whose ``.git`` may be stale or absent) or a wheel.
When set it wins over what ``git`` says in the working directory."""

SWITCH_PREFIXES = ("GEMMREG_", "TRITON_", "TORCH_", "PYTORCH_")
"""Environment variables that can choose what runs, recorded with their values
in every manifest: gemmreg's own (plugins, device, caches), Triton's (its
interpreter, its cache, its backend options) and torch's (its GEMM backends,
TunableOp). Two evidence folders taken under different switches then say so.
Only these: the rest of the environment is not ours to publish."""
SWITCH_NAMES = (
    "NVIDIA_TF32_OVERRIDE",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)
"""Single variables outside those prefixes that change a GEMM's math
(``NVIDIA_TF32_OVERRIDE=0`` turns TF32 off in cuBLAS whatever torch asks) or
choose the device it runs on (``--device N`` sets the first two:
:mod:`gemmreg.workers.device_choice`)."""
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "API_KEY")
"""A switch whose name holds one of these is recorded as set, its value withheld."""
WITHHELD = "(set; value withheld)"

NVIDIA_SMI_FIELDS = (
    "name",
    "driver_version",
    "clocks.sm",
    "clocks.mem",
    "clocks.max.sm",
    "power.limit",
    "temperature.gpu",
    "clocks_throttle_reasons.active",
)


def command_line() -> str:
    """The command as a user would retype it (``python -m gemmreg`` or ``gemmreg``)."""
    program = Path(sys.argv[0]).name
    if program == "__main__.py":
        program = "python -m gemmreg"
    return " ".join([program, shlex.join(sys.argv[1:])]).strip()


def pin_torch_precision() -> dict[str, object]:
    """Pin torch's global switches in this process and return them, as recorded.

    A plugin that calls torch.mm can then declare IEEE fp32 (no TF32) and
    no reduced-precision reductions for fp16/bf16. Every worker task starts
    from these values (:func:`gemmreg.discovery.torch_state.pin`); a kernel
    that declares TF32 math for fp32 runs with TF32 allowed instead
    (:func:`gemmreg.discovery.torch_state.pin_for`).
    """
    from gemmreg.discovery import torch_state

    recorded: dict[str, object] = {**torch_state.record(torch_state.pin())}
    return recorded


def switches(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The :data:`SWITCH_PREFIXES` and :data:`SWITCH_NAMES` variables set, by name."""
    env = os.environ if env is None else env
    chosen = sorted(n for n in env if n.startswith(SWITCH_PREFIXES) or n in SWITCH_NAMES)
    return {n: WITHHELD if any(w in n.upper() for w in SECRET_WORDS) else env[n] for n in chosen}


def _run(command: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def gpu_state() -> dict[str, str]:
    """Clocks, power limit and throttle reasons from nvidia-smi, where it exists."""
    if not shutil.which("nvidia-smi"):
        return {}
    query = ",".join(NVIDIA_SMI_FIELDS)
    line = _run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"])
    values = [v.strip() for v in line.splitlines()[0].split(",")] if line else []
    return dict(zip(NVIDIA_SMI_FIELDS, values, strict=False))


def _git(cwd: Path) -> dict[str, str]:
    commit = _run(["git", "rev-parse", "HEAD"], cwd)
    if not commit:
        return {}
    dirty = bool(_run(["git", "status", "--porcelain", "--untracked-files=no"], cwd))
    return {"commit": commit, "dirty": str(dirty).lower()}


def git_record() -> dict[str, str]:
    """Which commit ran: ``GEMMREG_GIT_COMMIT`` if given, else the checkout the
    package was imported from, else the directory the command ran in (an
    installed wheel sits outside any checkout)."""
    explicit = os.environ.get(COMMIT_ENV)
    if explicit:
        return {"commit": explicit, "source": COMMIT_ENV}
    return _git(Path(__file__).resolve().parent) or _git(Path.cwd()) or {"commit": "unknown"}


def source_hashes(kernels: Iterable[RegisteredKernel]) -> dict[str, dict[str, str]]:
    hashes: dict[str, dict[str, str]] = {}
    for kernel in kernels:
        files = {}
        for path in kernel.spec.sources:
            try:
                files[Path(path).name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            except OSError as error:
                files[Path(path).name] = f"unreadable: {error.strerror}"
        hashes[kernel.name] = files
    return hashes


def manifest(kernels: Iterable[RegisteredKernel], **extra: object) -> dict[str, object]:
    """The environment record for a run over ``kernels``."""
    import torch

    kernels = list(kernels)
    info = backend.current()
    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = "not installed"
    record: dict[str, object] = {
        "gemmreg": __version__,
        "timestamp_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command_line(),
        "git": git_record(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "torch_hip": getattr(torch.version, "hip", None),
        "triton": triton_version,
        "backend": info.kind,
        "device_name": info.device_name,
        "triton_interpreter": info.triton_interpreter,
        "TRITON_INTERPRET": os.environ.get("TRITON_INTERPRET", ""),
        "switches": switches(),
        "precision_flags_pinned_in_workers": pin_torch_precision(),
        "plugins": {
            k.name: {"plugin": k.origin.plugin, "package": k.origin.package} for k in kernels
        },
        "kernel_sources_sha256": source_hashes(kernels),
    }
    if info.is_gpu:
        props = torch.cuda.get_device_properties(0)
        record["device"] = {
            "count": torch.cuda.device_count(),
            "capability": f"{props.major}.{props.minor}",
            "multiprocessors": props.multi_processor_count,
            "memory_bytes": props.total_memory,
            "l2_bytes": getattr(props, "L2_cache_size", None),
        }
        record["gpu_state_before"] = gpu_state()
        record["gpu"] = gpu_record()
    record.update(extra)
    return record


def gpu_record() -> dict[str, object]:
    """NVML's record of the GPU: UUID, persistence and clock settings, and the
    other processes on it (:mod:`gemmreg.instruments.gpu_monitor`)."""
    from gemmreg.instruments import gpu_monitor

    monitor, why = gpu_monitor.open_monitor(0)
    if monitor is None:
        return {"unavailable": why}
    try:
        return monitor.device_record(own_process_tree())
    finally:
        monitor.close()


def own_process_tree(proc: Path = Path("/proc")) -> set[int]:
    """This process and every process below it: gemmreg's own workers, which
    hold GPU contexts of their own and are not "other processes" sharing the
    GPU. (On the H200 a sweep whose workers had started before the manifest
    was flagged SHARED GPU by its own six workers.) Linux's /proc only;
    elsewhere just this process."""
    me = os.getpid()
    parents: dict[int, int] = {}
    try:
        entries = list(proc.iterdir())
    except OSError:
        return {me}
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile, or not ours to read
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1].isdigit():
            parents[int(entry.name)] = int(fields[1])
    tree, frontier = {me}, [me]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return tree
