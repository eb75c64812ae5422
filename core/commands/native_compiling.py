"""Scripts in a fresh Python for plugin tests (:func:`gemmreg.testing.run_fresh`),
and compiling a Triton kernel natively on a machine without a GPU
(:func:`gemmreg.testing.native_compile`, with
:func:`gemmreg.testing.compile_natively` for a script's kernels): what only
native code has (a pipelined loop, an atomic's memory order) is checked on
the CPU too."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest


def native_compile(script: str, timeout: float | None = 600) -> Any:
    """Run ``script`` in a fresh Python with ``TRITON_INTERPRET`` unset and
    return the JSON its last line prints; skip the calling test where this
    Triton has no NVIDIA backend with the ptxas it ships (then nothing could
    compile natively here).

    For a test that compiles a kernel for a GPU this machine lacks: Triton's
    compiler and ptxas run on the CPU (``triton.compile(ASTSource(...),
    target=GPUTarget("cuda", 90, 32))``), and the test reads the PTX or TTGIR.
    Fresh, so that the pytest process's choice of backend (the interpreter,
    with no GPU) does not hold there. A script that discovers plugins before
    it imports triton must unset ``TRITON_INTERPRET`` again after that:
    discovery with no GPU turns the interpreter on."""
    if not _ships_ptxas():
        pytest.skip("this Triton has no NVIDIA backend with ptxas")
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    return _run(script, env, timeout)


def compile_natively(
    fn: Any,
    types: Mapping[str, str],
    constexprs: Mapping[str, Any],
    *,
    aligned: Iterable[str] = (),
    num_warps: int,
    num_stages: int | None = None,
    target: tuple[str, int, int] = ("cuda", 90, 32),
    **options: Any,
) -> Any:
    """Compile the jit function ``fn`` for ``target`` (an H100/H200 by default)
    and return Triton's compiled kernel (``.asm["ptx"]``, ``.asm["cubin"]``,
    ``.metadata.shared``). Call it inside a :func:`native_compile` script.

    ``types`` gives the Triton type of each pointer or descriptor argument
    (``"*bf16"``, ``"tensordesc<...>"``); an argument named in ``constexprs``
    is compiled as that constant, and every other one as ``i32``.
    ``aligned`` names the arguments a launch would pass as multiples of 16,
    which Triton specialises on (``tt.divisibility``): a test of vectorised
    loads must compile the kernel as the launch would see it. ``options``
    are Triton's other compile options (``launch_cooperative_grid=True``,
    ``num_ctas=2``); ``num_stages`` is passed where given (a Gluon kernel
    pipelines itself). A Gluon jit function compiles as Gluon source."""
    import triton
    from triton.backends.compiler import GPUTarget

    wanted = set(aligned)
    signature = {
        name: types.get(name, "constexpr" if name in constexprs else "i32") for name in fn.arg_names
    }
    divisible = {
        (i,): [["tt.divisibility", 16]]
        for i, name in enumerate(fn.arg_names)
        if name in wanted and name not in constexprs
    }
    stages = {} if num_stages is None else {"num_stages": num_stages}
    return triton.compile(
        _source_type(fn)(fn=fn, signature=signature, constexprs=dict(constexprs), attrs=divisible),
        target=GPUTarget(*target),
        options={"num_warps": num_warps, **stages, **options},
    )


def _source_type(fn: Any) -> Any:
    """Triton's source class for ``fn``: Gluon's for a ``gluon.jit`` function
    (Triton's own would parse it as Triton), else Triton's."""
    from triton.compiler import ASTSource

    try:
        from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction
    except ImportError:  # a Triton without Gluon
        return ASTSource
    return GluonASTSource if isinstance(fn, GluonJITFunction) else ASTSource


def run_fresh(script: str, env: dict[str, str] | None = None, timeout: float | None = None) -> Any:
    """Run ``script`` in a fresh Python (``env``: its environment, default
    this one's) and return the JSON its last line prints; the calling test
    fails, with the script's stderr, where it exits non-zero.

    Fresh, so that a kernel the interpreter crashes on takes down that
    process, not pytest's; and gemmreg runs kernels there, so where no GPU
    can be here Triton's interpreter is on in it before anything is imported
    (:func:`interpreter_env`)."""
    return _run(script, interpreter_env(os.environ if env is None else env), timeout)


def _run(script: str, env: dict[str, str], timeout: float | None) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def interpreter_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with Triton's interpreter on where no GPU can be here for a
    process started with it (no GPU device node, or ``GEMMREG_DEVICE=cpu``
    in ``env``); where one may be, as it is."""
    from gemmreg.contract import backend

    started = dict(env)
    if not backend.gpu_likely(started):
        started["TRITON_INTERPRET"] = "1"
    return started


def _ships_ptxas() -> bool:
    """Whether the installed Triton carries its NVIDIA backend's ptxas."""
    spec = importlib.util.find_spec("triton")
    if spec is None or spec.origin is None:
        return False
    return (Path(spec.origin).parent / "backends" / "nvidia" / "bin" / "ptxas").exists()
