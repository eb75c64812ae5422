"""Where a plugin's kernels run: the public, read-only view of what the core decided.

The core decides the backend once, before any plugin is imported (it turns
Triton's interpreter on where there is no GPU, and ``GEMMREG_DEVICE=cpu``
keeps a GPU host on the CPU path). A plugin that looked for itself, at
``TRITON_INTERPRET`` or ``torch.cuda.is_available()``, could disagree with
that decision and declare, or allocate for, a device its kernels do not run
on. So plugins read :func:`where` and nothing else.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import attrs
from gemmreg.contract import backend
from gemmreg.contract.records import Backend

CACHE_DIR_ENV = "GEMMREG_CACHE_DIR"
"""Where plugins keep what they save between processes (tuning choices, say).
``gemmreg compare`` points it at an empty directory for its cold-start process,
so that work is reported as cold start once and reused by the timed processes."""
SANITIZING_ENV = "GEMMREG_SANITIZING"
"""Set (to the tool's name) in every worker of the sanitizer pass, so plugins
can skip work whose only purpose is speed, such as autotuning: kernels run
10-100x slower there and timings mean nothing (see the hookspec module)."""


def default_cache_dir() -> Path:
    """``~/.cache/gemmreg``: used when :data:`CACHE_DIR_ENV` is unset or empty."""
    return Path.home() / ".cache" / "gemmreg"


@attrs.frozen(kw_only=True)
class Environment:
    """Where this process runs kernels, as gemmreg decided it (:func:`gemmreg.where`).

    Declarations may depend on it: a plugin's registration hook runs in every
    process that runs its kernels, after the backend is decided, so a kernel
    whose arithmetic differs by backend (Triton's fp32 ``tl.dot`` is TF32 on
    NVIDIA, IEEE under the interpreter) declares what really runs here.
    """

    backend: Backend
    """``cuda`` (NVIDIA), ``rocm`` (AMD) or ``cpu`` (no GPU, or ``GEMMREG_DEVICE=cpu``)."""
    device: str
    """The torch device string the core's operands live on: ``cuda`` (ROCm too) or ``cpu``.
    Allocate workspaces here."""
    device_name: str
    """The GPU's name as torch reports it, or the host's processor on the CPU."""
    capability: tuple[int, int] | None
    """The GPU's (major, minor) compute capability as torch reports it (on ROCm,
    torch's reading of the gfx version); None on the CPU."""
    arch: str
    """``sm90`` on CUDA, the gfx architecture name on ROCm, ``""`` on the CPU:
    a key for anything tuned per chip."""
    multiprocessors: int | None
    """Streaming multiprocessors (compute units on ROCm); None on the CPU."""
    triton_interpreted: bool
    """Triton kernels run under Triton's interpreter (NumPy on the host): always
    on the CPU backend, and on a GPU host started with ``TRITON_INTERPRET=1``."""
    sanitizer: str | None
    """The tool's name while ``gemmreg check --sanitize`` runs this process, else
    None. Kernels run 10-100x slower there and timings mean nothing: skip work
    whose only purpose is speed, such as benchmarking candidate configs."""
    cache_dir: Path
    """Keep anything saved between processes here (``$GEMMREG_CACHE_DIR``, default
    ``~/.cache/gemmreg``); it may not exist yet."""

    @property
    def is_gpu(self) -> bool:
        """True on ``cuda`` and ``rocm``."""
        return self.backend != "cpu"

    @property
    def triton_target(self) -> Backend:
        """Whose arithmetic a Triton kernel gets here: ``cpu`` wherever Triton runs
        interpreted (a GPU host with ``TRITON_INTERPRET=1`` too), else the backend's.
        Declare a Triton kernel's precision and tolerance by this, not by :attr:`backend`."""
        return "cpu" if self.triton_interpreted else self.backend


@attrs.frozen
class _Device:
    capability: tuple[int, int] | None
    arch: str
    multiprocessors: int | None


@functools.cache
def _device() -> _Device:
    """The GPU's fixed facts, read once per process (torch's query is not free)."""
    info = backend.current()
    if not info.is_gpu:
        return _Device(capability=None, arch="", multiprocessors=None)
    import torch

    props = torch.cuda.get_device_properties(0)
    if info.kind == "rocm":
        arch = str(getattr(props, "gcnArchName", "rocm"))
    else:
        arch = f"sm{props.major}{props.minor}"
    return _Device(
        capability=(props.major, props.minor),
        arch=arch,
        multiprocessors=props.multi_processor_count,
    )


def where() -> Environment:
    """Where this process runs kernels. The backend is decided once per process;
    the cache directory and the sanitizer are read on each call, since they are
    set per worker process."""
    info = backend.current()
    device = _device()
    configured = os.environ.get(CACHE_DIR_ENV, "").strip()
    return Environment(
        backend=info.kind,
        device=info.device,
        device_name=info.device_name,
        capability=device.capability,
        arch=device.arch,
        multiprocessors=device.multiprocessors,
        triton_interpreted=info.triton_interpreter,
        sanitizer=os.environ.get(SANITIZING_ENV, "").strip() or None,
        cache_dir=Path(configured) if configured else default_cache_dir(),
    )
