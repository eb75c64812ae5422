"""Can a kernel run here, and can it run this problem? Unsupported is not failed:
every "no" here comes with the reason that is shown to the user.

Both questions run plugin code in gemmreg's own process, so both are
contained (:mod:`gemmreg.discovery.plugin_calls`): what it prints is dropped,
and whatever it raises (``sys.exit`` and ``KeyboardInterrupt`` included), a
call of ``os._exit``, or a call that does not return within the load timeout
is the answer's reason; a constraint that hung once is not asked again
(:data:`_hung`)."""

from __future__ import annotations

from gemmreg.contract import backend, known_limits
from gemmreg.contract.records import Capabilities, KernelSpec, Problem
from gemmreg.discovery import plugin_calls


def unavailable_reason(spec: KernelSpec) -> str | None:
    """Why ``spec`` cannot run on this machine, or None. Never raises (but
    lets a real Ctrl-C through)."""
    info = backend.current()
    try:
        reason = plugin_calls.call(spec.name, "its availability check", spec.available)
    except plugin_calls.Misbehaved as error:
        return error.reason
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


_hung: dict[int, tuple[Capabilities, str]] = {}
"""Capabilities whose constraint hung in this process (by ``id``, the object
kept so that its ``id`` is not reused), and the reason it hung with. A check
asks the constraint about every case, some more than once: asked again, a
hung one would cost the load timeout each time (two minutes by default,
hours over a matrix) and leave one more stuck thread. Its first hang is its
answer for every problem after it, so the kernel's cases are skipped with
that one reason."""


def unsupported_reason(spec: KernelSpec, problem: Problem) -> str | None:
    """Why ``problem`` is outside what ``spec`` declares, or None. Never raises
    (but lets a real Ctrl-C through)."""
    capabilities = spec.capabilities
    if type(capabilities) is Capabilities and capabilities.constraint is None:
        return capabilities.unsupported(problem)  # gemmreg's own code: nothing to contain
    hung = _hung.get(id(capabilities))
    if hung is not None and hung[0] is capabilities:
        return hung[1]
    try:
        return plugin_calls.call(
            spec.name, "its capability constraint", lambda: capabilities.unsupported(problem)
        )
    except plugin_calls.Misbehaved as error:
        if error.hung:
            _hung[id(capabilities)] = (capabilities, error.reason)
        return error.reason
