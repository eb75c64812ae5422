"""torch's process-wide settings, pinned before plugin code runs and checked after.

Plugins share worker processes, and torch keeps global state that changes what
a kernel computes: the default dtype, TF32 and reduced-precision switches,
``float32_matmul_precision``, deterministic mode, the default device, the
number of CPU threads an operator may use (``torch.set_num_threads``: one
plugin setting 1 would make every later CPU figure in that worker slower), and
on a GPU the current device and stream. A plugin that flips one in ``prepare``
would otherwise change the next plugin's result (a reference kernel failing
its precheck after another plugin turned TF32 on). So every worker task starts from
:func:`pin`, and the core calls :func:`gemmreg.discovery.state_changes.changes`
after the plugin's prepare and launch: a change is blamed on the plugin that made it, and the next
:func:`pin` puts the pinned values back for the others.

torch >= 2.9 also has a newer TF32 switch (``fp32_precision``); mixing it with
the legacy one makes the legacy getters raise. A reading that raises is kept
as text (``unreadable: ...``), which differs from the pinned value and so is
reported too, and :func:`pin` resets the newer switch before the legacy one.

The pin is per kernel (:func:`pin_for`): a kernel that declares TF32 math for
fp32 runs its prepare and calls with TF32 allowed (a ``torch.mm`` that is
cuBLAS TF32, the like-for-like reference of a TF32 kernel), every other kernel
with it off; the check after its code compares with that kernel's own pin, so
a plugin that flips a switch itself is still blamed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable
from typing import Any

import attrs
from gemmreg.contract.records import KernelSpec, Problem

PINNED_DEVICE = 0
"""The CUDA device index every task starts on (the first visible device)."""

Reading = bool | int | str | None
"""A flag's value as torch reports it, or ``"unreadable: ..."`` if reading raised."""


@attrs.frozen(kw_only=True)
class TorchState:
    """One reading of torch's global switches; equal readings mean same behaviour."""

    default_dtype: Reading
    default_device: Reading
    matmul_allow_tf32: Reading
    cudnn_allow_tf32: Reading
    fp16_reduced_precision_reduction: Reading
    bf16_reduced_precision_reduction: Reading
    fp16_accumulation: Reading
    """cuBLAS fp16 accumulation (torch >= 2.7); None where torch lacks it."""
    float32_matmul_precision: Reading
    fp32_precision: Reading
    """The newer TF32 switches (global, matmul, cudnn) as one text; None before torch 2.9."""
    deterministic_algorithms: Reading
    num_threads: Reading = None
    """``torch.get_num_threads()``; pinned to the process's own first reading
    (:func:`_threads_at_start`)."""
    device: int | None = None
    """The current CUDA device; None while CUDA is not initialized in this process."""
    stream: int | None = None
    """The current stream's id on that device (the default stream's once pinned)."""


LABELS = {
    "default_dtype": "default dtype",
    "default_device": "default device",
    "matmul_allow_tf32": "cuda.matmul.allow_tf32",
    "cudnn_allow_tf32": "cudnn.allow_tf32",
    "fp16_reduced_precision_reduction": "cuda.matmul.allow_fp16_reduced_precision_reduction",
    "bf16_reduced_precision_reduction": "cuda.matmul.allow_bf16_reduced_precision_reduction",
    "fp16_accumulation": "cuda.matmul.allow_fp16_accumulation",
    "float32_matmul_precision": "float32_matmul_precision",
    "fp32_precision": "fp32_precision (global/matmul/cudnn)",
    "deterministic_algorithms": "deterministic algorithms",
    "num_threads": "intra-op CPU threads (torch.get_num_threads)",
    "device": "current CUDA device",
    "stream": "current CUDA stream id",
}
"""How each field is named in a message and the manifest: torch's own spelling
(under ``torch.backends``) where it has one."""


def _read(getter: Callable[[], object]) -> Reading:
    try:
        value = getter()
    except Exception as error:  # mixed TF32 APIs make torch's getters raise
        return f"unreadable: {type(error).__name__}"
    return str(value) if not isinstance(value, bool | int | type(None)) else value


@functools.cache
def _threads_at_start() -> int:
    """The CPU threads torch had at this process's first reading: the first
    reading comes before any plugin is imported (discovery reads the state
    before and after each import), so it is torch's own choice (the cores,
    or ``OMP_NUM_THREADS``) and the value every task is pinned back to."""
    import torch

    return torch.get_num_threads()


def current() -> TorchState:
    """Read torch's global switches now (without initializing CUDA)."""
    import torch

    _threads_at_start()

    matmul = torch.backends.cuda.matmul
    new_api = hasattr(torch.backends, "fp32_precision")
    device = stream = None
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        device = torch.cuda.current_device()
        stream = torch.cuda.current_stream(device).stream_id
    return TorchState(
        default_dtype=_read(torch.get_default_dtype),
        default_device=_read(getattr(torch, "get_default_device", lambda: "cpu")),
        matmul_allow_tf32=_read(lambda: matmul.allow_tf32),
        cudnn_allow_tf32=_read(lambda: torch.backends.cudnn.allow_tf32),
        fp16_reduced_precision_reduction=_read(
            lambda: matmul.allow_fp16_reduced_precision_reduction
        ),
        bf16_reduced_precision_reduction=_read(
            lambda: matmul.allow_bf16_reduced_precision_reduction
        ),
        fp16_accumulation=_read(lambda: getattr(matmul, "allow_fp16_accumulation", None)),
        float32_matmul_precision=_read(torch.get_float32_matmul_precision),
        fp32_precision=_read(
            lambda: "/".join(
                getattr(owner, "fp32_precision")  # noqa: B009 (absent before torch 2.9)
                for owner in (torch.backends, matmul, torch.backends.cudnn)
            )
        )
        if new_api
        else None,
        deterministic_algorithms=_read(torch.are_deterministic_algorithms_enabled),
        num_threads=_read(torch.get_num_threads),
        device=device,
        stream=stream,
    )


INDUCTOR_CONFIG = "torch._inductor.config"
INDUCTOR_DETERMINISTIC_ENV = "TORCHINDUCTOR_DETERMINISTIC"


def _use_deterministic_algorithms(mode: bool) -> None:
    """``torch.use_deterministic_algorithms``, without its cost when it changes nothing.

    That call imports ``torch._inductor`` (and with it dynamo: 2-3 s of CPU, as
    long again as importing torch) only to copy the flag into inductor's
    config. Every worker and every command pins the flag off, so each paid it
    once more. When the flag is already off and inductor's config is not loaded
    (so it will load with its default, off unless TORCHINDUCTOR_DETERMINISTIC=1),
    the call would change nothing: it is skipped.
    """
    import torch

    if (
        not mode
        and not torch.are_deterministic_algorithms_enabled()
        and INDUCTOR_CONFIG not in sys.modules
        and os.environ.get(INDUCTOR_DETERMINISTIC_ENV) != "1"
    ):
        return
    torch.use_deterministic_algorithms(mode)


def _set(action: Callable[..., object]) -> None:  # a lambda, its loop values bound as defaults
    with contextlib.suppress(Exception):  # a switch this torch lacks, or left unreadable
        action()


TF32_MATH = "tf32"
"""The declared fp32 math (``Precision.math``) whose kernel runs with TF32 allowed."""


def allows_tf32(spec: KernelSpec, problem: Problem) -> bool:
    """Whether ``spec`` runs ``problem`` with torch's TF32 matmul switch on: it
    declares TF32 math for fp32 and the problem is fp32."""
    precision = spec.capabilities.precision.get(problem.dtype)
    return problem.dtype == "fp32" and precision is not None and precision.math == TF32_MATH


def pin_for(spec: KernelSpec, problem: Problem) -> TorchState:
    """:func:`pin` as ``spec`` runs ``problem``: TF32 on where it declares TF32 math."""
    return pin(tf32=allows_tf32(spec, problem))


def pin(tf32: bool = False) -> TorchState:
    """Set the pinned values and return the reading that results.

    Pinned: float32 default dtype on the CPU device, IEEE fp32 (TF32 off,
    ``float32_matmul_precision`` "highest"), no reduced-precision reductions
    or fp16 accumulation, deterministic mode off, the CPU threads torch chose
    at the process's start, and where CUDA is initialized
    device 0 and its default stream. With ``tf32``, TF32 matmuls are allowed
    instead (``allow_tf32`` True, ``float32_matmul_precision`` "high", which on
    torch >= 2.9 also sets the newer matmul switch to "tf32"); cuDNN's TF32
    stays off (no GEMM goes through it).
    """
    import torch

    matmul = torch.backends.cuda.matmul
    if hasattr(torch.backends, "fp32_precision"):
        # The newer TF32 switch first: "none" hands the decision back to the legacy flags.
        for owner in (
            torch.backends,
            matmul,
            torch.backends.cudnn,
            getattr(torch.backends.cudnn, "conv", None),
            getattr(torch.backends.cudnn, "rnn", None),
        ):
            if owner is not None:
                _set(lambda owner=owner: setattr(owner, "fp32_precision", "none"))
    _set(lambda: torch.set_default_dtype(torch.float32))
    if hasattr(torch, "set_default_device"):
        _set(lambda: torch.set_default_device(None))
    _set(lambda: torch.set_float32_matmul_precision("high" if tf32 else "highest"))
    _set(lambda: setattr(matmul, "allow_tf32", tf32))
    _set(lambda: setattr(torch.backends.cudnn, "allow_tf32", False))
    _set(lambda: setattr(matmul, "allow_fp16_reduced_precision_reduction", False))
    _set(lambda: setattr(matmul, "allow_bf16_reduced_precision_reduction", False))
    if hasattr(matmul, "allow_fp16_accumulation"):
        _set(lambda: setattr(matmul, "allow_fp16_accumulation", False))
    _set(lambda: _use_deterministic_algorithms(False))
    if torch.get_num_threads() != _threads_at_start():
        _set(lambda: torch.set_num_threads(_threads_at_start()))
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        _set(lambda: torch.cuda.set_device(PINNED_DEVICE))
        _set(lambda: torch.cuda.set_stream(torch.cuda.default_stream(PINNED_DEVICE)))
    return current()


def restore(state: TorchState) -> None:
    """Put back the switches of an earlier reading (where they were readable).

    For discovery, which must leave the main process as it found it: that
    state is torch's defaults, not the pinned values."""
    import torch

    matmul = torch.backends.cuda.matmul
    pin()  # a known, readable starting point, then the recorded values
    setters: dict[str, Callable[[Any], object]] = {
        "default_dtype": lambda v: torch.set_default_dtype(getattr(torch, v.split(".")[-1])),
        "matmul_allow_tf32": lambda v: setattr(matmul, "allow_tf32", v),
        "cudnn_allow_tf32": lambda v: setattr(torch.backends.cudnn, "allow_tf32", v),
        "fp16_reduced_precision_reduction": lambda v: setattr(
            matmul, "allow_fp16_reduced_precision_reduction", v
        ),
        "bf16_reduced_precision_reduction": lambda v: setattr(
            matmul, "allow_bf16_reduced_precision_reduction", v
        ),
        "fp16_accumulation": lambda v: setattr(matmul, "allow_fp16_accumulation", v),
        "deterministic_algorithms": _use_deterministic_algorithms,
        "num_threads": lambda v: torch.set_num_threads(int(v)),
    }
    # The precision string last but one: it sets matmul.allow_tf32 as a side effect.
    precision = state.float32_matmul_precision  # a string as read (else nothing to put back)
    if isinstance(precision, str):
        _set(lambda: torch.set_float32_matmul_precision(precision))
    for field, setter in setters.items():
        value = getattr(state, field)
        if value is not None and not str(value).startswith("unreadable"):
            _set(lambda setter=setter, value=value: setter(value))
    # The legacy setters above also move the newer switches: put those back last.
    owners = (torch.backends, matmul, torch.backends.cudnn)
    if isinstance(state.fp32_precision, str) and state.fp32_precision.count("/") == 2:
        for owner, value in zip(owners, state.fp32_precision.split("/"), strict=True):
            _set(lambda owner=owner, value=value: setattr(owner, "fp32_precision", value))


def record(state: TorchState) -> dict[str, Reading]:
    """The reading as a manifest records it, under torch's own names."""
    return {LABELS[field.name]: getattr(state, field.name) for field in attrs.fields(TorchState)}
