"""Which backend this process runs kernels on, decided once.

The decision must come before any Triton kernel is decorated: Triton reads
``TRITON_INTERPRET`` in ``@triton.jit``, so on a machine with no GPU the core
switches the interpreter on before plugins are imported: in :func:`current`,
which discovery calls before it imports any plugin, and, without torch
(:func:`settle_interpreter_early`), first thing in the processes gemmreg
starts to run kernels (its workers, :func:`gemmreg.testing.run_fresh`'s
scripts) and in gemmreg's own test suite. Never at ``import gemmreg``: the
pytest plugin imports gemmreg in every pytest session of an environment that
has it, and another project's Triton tests must not turn interpreted.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from gemmreg.contract.records import Backend

FORCE_ENV = "GEMMREG_DEVICE"
"""Set to ``cpu`` to run on the CPU (Triton interpreter) even where a GPU exists."""


def forced_cpu(env: Mapping[str, str] | None = None) -> bool:
    """Whether :data:`FORCE_ENV` asks for the CPU. Any other value than ``cpu``
    (or nothing) is a typo that would time the GPU a user meant to keep out:
    the command line refuses it (:func:`check_force_env`) before any work."""
    return (os.environ if env is None else env).get(FORCE_ENV, "").strip().lower() == "cpu"


def check_force_env(env: Mapping[str, str]) -> None:
    """Refuse a :data:`FORCE_ENV` that is neither unset, empty nor ``cpu``."""
    from gemmreg.contract.bad_input import UsageError

    value = env.get(FORCE_ENV, "")
    if value.strip().lower() not in ("", "cpu"):
        raise UsageError(f"{FORCE_ENV} must be 'cpu' or unset, got {value[:40]!r}")


@attrs.frozen(kw_only=True)
class BackendInfo:
    kind: Backend
    device: str
    """The torch device string kernels run on: ``cuda`` (also for ROCm) or ``cpu``."""
    device_name: str
    triton_interpreter: bool
    note: str = ""

    @property
    def is_gpu(self) -> bool:
        return self.kind != "cpu"


INTERPRETER_GUESSED_NOTE = (
    "gemmreg found no GPU device node at import and turned Triton's interpreter on, "
    "but torch sees a GPU: kernels decorated before now run interpreted"
)

_interpreter_guessed = False
"""Whether :func:`settle_interpreter_early` set ``TRITON_INTERPRET`` itself."""


def settle_interpreter_early() -> None:
    """Where gemmreg runs kernels (module docstring): turn Triton's
    interpreter on where no GPU can be here (no GPU device node, or
    ``GEMMREG_DEVICE=cpu``), without importing torch (seconds). Where a
    device node exists, :func:`current` decides, with torch, before discovery
    imports any plugin; should torch see a GPU after all, :func:`current`
    turns the guessed interpreter back off."""
    global _interpreter_guessed
    if not gpu_likely() and os.environ.get("TRITON_INTERPRET") != "1":
        os.environ["TRITON_INTERPRET"] = "1"
        _interpreter_guessed = True


@functools.cache
def current() -> BackendInfo:
    """Detect the backend and, with no GPU, turn on Triton's interpreter."""
    import torch

    if torch.cuda.is_available() and not forced_cpu():
        kind: Backend = "rocm" if getattr(torch.version, "hip", None) else "cuda"
        note = ""
        if _interpreter_guessed and os.environ.get("TRITON_INTERPRET") == "1":
            del os.environ["TRITON_INTERPRET"]
            note = INTERPRETER_GUESSED_NOTE if "triton" in sys.modules else ""
        return BackendInfo(
            kind=kind,
            device="cuda",
            device_name=torch.cuda.get_device_name(0),
            triton_interpreter=os.environ.get("TRITON_INTERPRET") == "1",
            note=note,
        )
    note = ""
    if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
        note = "triton was imported before gemmreg could enable its interpreter"
    os.environ["TRITON_INTERPRET"] = "1"
    import platform

    return BackendInfo(
        kind="cpu",
        device="cpu",
        device_name=platform.processor() or platform.machine(),
        triton_interpreter=True,
        note=note,
    )


GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/kfd", "/dev/dxg")
"""NVIDIA's and AMD's (ROCm's) control device nodes, and WSL2's GPU node."""


def gpu_likely(env: Mapping[str, str] | None = None) -> bool:
    """Whether a GPU is likely here, without importing torch (seconds): a
    guess for work that may start before :func:`current` can answer.
    ``env``: the environment of the process asked about (default this one's)."""
    if forced_cpu(env):
        return False
    return any(os.path.exists(node) for node in GPU_DEVICE_NODES)


def initialize_device() -> None:
    """Create the device context now, so that the first kernel measured in a
    process is not charged for it in its cold-start figures."""
    if current().is_gpu:
        import torch

        torch.ones(1, device=current().device).add_(1)
        torch.cuda.synchronize()
        # Triton builds and loads its driver helpers once per process; do it
        # here so that the first Triton kernel timed is not charged for it.
        try:
            import triton

            triton.runtime.driver.active.get_current_device()
        except Exception:
            pass  # no Triton, or a backend it cannot drive: its plugins will say so


def device_healthy() -> bool:
    """False once the GPU context is poisoned (an illegal address, a device-side
    assert): every later call in this process would fail too."""
    if not current().is_gpu:
        return True
    import torch

    try:
        torch.cuda.synchronize()
        torch.ones(1, device=current().device).add_(1).item()
    except Exception:
        return False
    return True


def synchronize() -> None:
    """Wait for queued device work; a no-op on the CPU, where launches are synchronous."""
    if current().is_gpu:
        import torch

        torch.cuda.synchronize()


def release_memory() -> None:
    """Hand cached device memory back, so a worker waiting between tasks
    holds no more than its context."""
    if current().is_gpu:
        import torch

        torch.cuda.empty_cache()
