"""Can a kernel run here, and can it run this problem? Unsupported is not failed:
every "no" here comes with the reason that is shown to the user.

Both questions run plugin code in gemmreg's own process, so both are
contained: what it prints is dropped, and whatever it raises (``sys.exit``
included) is the answer's reason."""

from __future__ import annotations

from gemmreg.contract import backend, known_limits
from gemmreg.contract.records import KernelSpec, Problem
from gemmreg.discovery import capture, interrupts


def unavailable_reason(spec: KernelSpec) -> str | None:
    """Why ``spec`` cannot run on this machine, or None. Never raises."""
    info = backend.current()
    try:
        with capture.captured_output():  # plugin code: its prints stay off our stdout
            reason = spec.available()
    except BaseException as error:  # sys.exit in plugin code must not end gemmreg
        if interrupts.from_signal(error):
            raise
        return f"its availability check raised {type(error).__name__}: {error}"
    if reason:
        return str(reason)
    if spec.capabilities.triton:
        reason = known_limits.triton_unavailable()
        if reason:
            return reason
    if info.kind not in spec.capabilities.backends:
        declared = ", ".join(sorted(spec.capabilities.backends))
        return f"runs on {declared}; this machine's backend is {info.kind}"
    return None


def unsupported_reason(spec: KernelSpec, problem: Problem) -> str | None:
    """Why ``problem`` is outside what ``spec`` declares, or None. Never raises."""
    try:
        with capture.captured_output():
            return spec.capabilities.unsupported(problem)
    except BaseException as error:
        if interrupts.from_signal(error):
            raise
        return f"its capability constraint raised {type(error).__name__}: {error}"
