"""Run-time compilation of kernel-only HIP/CUDA source, behind one function.

``torch.cuda._compile_kernel`` wraps NVRTC on CUDA builds of torch and hiprtc
on ROCm builds. It is private API, so gemmreg touches it here and nowhere else:
if torch renames it, this module is the whole fix. NVRTC and hiprtc have no C++
standard headers, so sources must be kernel-only (no ``#include <cstddef>``).
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Sequence

import attrs


@attrs.frozen(kw_only=True)
class CompiledKernel:
    """A kernel compiled at run time, ready to launch (:func:`compile_kernel`).

    It keeps its compile time and source hash, so the cost of the first call
    can be reported as cold start and the source that ran can be named."""

    name: str
    compiler: str
    """``nvrtc`` or ``hiprtc``."""
    compile_seconds: float
    source_sha256: str
    _function: Callable[..., object] = attrs.field(repr=False, alias="function")

    def launch(
        self,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: Sequence[object],
        shared_mem: int = 0,
    ) -> None:
        """Launch on torch's current stream. Python ints travel as 32-bit C ints,
        floats as doubles, tensors as device pointers."""
        self._function(grid=grid, block=block, args=list(args), shared_mem=shared_mem)

    def allow_dynamic_shared_memory(self, nbytes: int) -> None:
        """Let launches ask for up to ``nbytes`` of dynamic shared memory. Past
        48 KB a kernel must opt in (cuFuncSetAttribute, through torch's kernel
        object); below it this only records the size."""
        configure = getattr(self._function, "set_shared_memory_config", None)
        if configure is None:
            raise RuntimeError(
                "this torch's compiled-kernel object has no set_shared_memory_config: "
                "cannot opt into more than 48 KB of dynamic shared memory"
            )
        configure(nbytes)


def unavailable_reason() -> str | None:
    """Why run-time compilation cannot work in this process, or None: pass it as
    ``KernelSpec(available=...)`` for a kernel compiled with :func:`compile_kernel`.
    It needs a GPU and a torch new enough to expose NVRTC/hiprtc."""
    import torch

    if not torch.cuda.is_available():
        return (
            "no GPU: HIP kernels need a CUDA (NVRTC) or ROCm (hiprtc) build of torch and a device"
        )
    if not hasattr(torch.cuda, "_compile_kernel"):
        return f"torch {torch.__version__} has no torch.cuda._compile_kernel (needs torch >= 2.8)"
    return None


@functools.cache
def compile_kernel(source: str, name: str) -> CompiledKernel:
    """Compile ``name`` from ``source`` for the current device; cached per process.

    The first call pays the compile, and its time is kept on the result, so
    the core can report cold start apart from steady state.
    """
    import torch

    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    start = time.perf_counter()
    function = torch.cuda._compile_kernel(source, name)
    elapsed = time.perf_counter() - start
    return CompiledKernel(
        name=name,
        compiler="hiprtc" if getattr(torch.version, "hip", None) else "nvrtc",
        compile_seconds=elapsed,
        source_sha256=hashlib.sha256(source.encode()).hexdigest(),
        function=function,
    )
