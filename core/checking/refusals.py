"""What counts as a plugin *refusing* a problem it does not declare.

``check`` hands every plugin one problem outside its capabilities
(:func:`gemmreg.checking.matrix.refusal_problem`) and passes it when the plugin
refuses. A refusal is a deliberate decision: the plugin looks at the problem
and raises an ordinary exception with a message before computing anything
(``Capabilities.require(problem)`` at the top of ``prepare``). An exception
is therefore *not* a refusal when

- it is a device fault (:func:`device_fault`): the plugin launched its
  kernel and the device failed it. On the H200 a plugin that never looked
  at its problem stored through an illegal address, and torch's
  ``AcceleratorError: CUDA error: an illegal memory access was encountered``
  was once passed as a clean refusal;
- the device is unusable afterwards (a poisoned context), whatever was raised;
- it is not an ``Exception`` at all (``sys.exit``, a crash, a hang): those
  never reach this judgement and are the worker's ERROR, CRASHED or TIMEOUT.

Such a case is an ERROR (:class:`NotARefusal`), never a pass.
"""

from __future__ import annotations

from gemmreg.contract import backend
from gemmreg.contract.records import KernelSpec, Problem
from gemmreg.workers.task_results import RefusalResult

DEVICE_FAULT_TYPES = frozenset({"AcceleratorError", "OutOfMemoryError", "CudaError", "HipError"})
"""Exception class names (anywhere in the exception's class hierarchy) that
mean the device failed work it was given: torch's ``AcceleratorError`` (2.8
on) and ``OutOfMemoryError``, cuda-python's and HIP bindings' errors. Matched
by name so that the judgement needs no GPU build of torch to be tested."""

DEVICE_FAULT_MARKERS = (
    "CUDA error",
    "CUDA driver error",
    "CUDA_ERROR_",
    "HIP error",
    "hipError",
    "Triton Error [CUDA]",
    "Triton Error [HIP]",
    "illegal memory access",
    "illegal address",
    "device-side assert",
    "unspecified launch failure",
)
"""Text that marks a device fault in a message, for errors raised as plain
``RuntimeError`` (torch before 2.8, Triton's launcher, a plugin's own wrapper)."""

CHAIN_DEPTH = 8
"""How many links of ``__cause__``/``__context__`` are searched: a plugin that
wraps a CUDA error in an exception of its own still launched and faulted."""


class NotARefusal(RuntimeError):
    """The plugin's answer to an undeclared problem was a fault, not a refusal:
    raised in the worker, so the case is an ERROR and a poisoned worker retires."""


def device_fault(error: BaseException) -> str:
    """The device fault in ``error`` or in what it wraps, as ``Type: message``;
    '' when there is none."""
    seen: set[int] = set()
    current: BaseException | None = error
    for _ in range(CHAIN_DEPTH):
        if current is None or id(current) in seen:
            break
        seen.add(id(current))
        names = {cls.__name__ for cls in type(current).__mro__}
        text = str(current).strip()
        if names & DEVICE_FAULT_TYPES or any(marker in text for marker in DEVICE_FAULT_MARKERS):
            first = text.splitlines()[0] if text else ""
            return f"{type(current).__name__}: {first}".strip().rstrip(":")
        current = current.__cause__ or current.__context__
    return ""


def not_a_refusal(error: Exception, device_usable: bool) -> str:
    """Why ``error``, raised on an undeclared problem, does not count as a
    refusal; '' when it does (the message is judged by the caller)."""
    fault = device_fault(error)
    if fault:
        return f"not a refusal: the device failed the plugin's launch ({fault})"
    if not device_usable:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raised = f"{type(error).__name__}: {first}".strip().rstrip(":")
        return f"not a refusal: raised {raised}, but left the device unusable (a poisoned context)"
    return ""


def refusal_case(spec: KernelSpec, problem: Problem) -> RefusalResult:
    """Hand the kernel a problem it does not declare: it must raise, clearly.

    A kernel that silently computes something for a dtype or layout it never
    declared would compute garbage the day the core's checks stop guarding it.
    A plugin that changes torch's global state fails, whether it raised or not.
    """
    from gemmreg.discovery import state_changes, torch_state

    expected = torch_state.pin_for(spec, problem)
    verdict = _refusal(spec, problem)
    found = state_changes.changes(expected)
    if found:
        return RefusalResult(passed=False, reason=str(state_changes.StateChanged(found)))
    return verdict


def _refusal(spec: KernelSpec, problem: Problem) -> RefusalResult:
    from gemmreg.checking.guarded_output import GuardedOutput
    from gemmreg.checking.output_check import make_operands

    device = backend.current().device
    try:
        launch = spec.prepare(problem)
        a, b, *scales = make_operands(spec, problem, 0, device, values="normal")
        out = GuardedOutput.allocate(problem, device).out
        launch(a, b, out, *scales)
        backend.synchronize()
    except Exception as error:
        fault = not_a_refusal(error, backend.device_healthy())
        if fault:  # the worker makes it this case's ERROR, and retires if poisoned
            raise NotARefusal(fault) from error
        message = str(error).strip()
        if not message:
            return RefusalResult(
                passed=False, reason=f"raised {type(error).__name__} with no message"
            )
        return RefusalResult(passed=True, reason=f"refused: {type(error).__name__}: {message}")
    return RefusalResult(
        passed=False,
        reason=f"accepted a problem outside the declared capabilities ({problem.label}) "
        "without raising",
    )
