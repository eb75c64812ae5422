"""What plugin code changed in torch's global state, and the blame for it.

:mod:`gemmreg.discovery.torch_state` reads and pins torch's switches; after a
plugin's prepare or launch the core compares a fresh reading with the pin it
ran under (:func:`changes`): a difference fails that plugin's own case
(:class:`StateChanged`), and the next pin puts the values back for the others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import attrs
from gemmreg.discovery.torch_state import LABELS, PINNED_DEVICE, TorchState, current

_Launch = TypeVar("_Launch", bound=Callable[..., object])


def differences(now: TorchState, expected: TorchState) -> list[str]:
    """``now`` against ``expected``, one phrase per switch that differs.

    A state read before CUDA was initialized expects device 0 and its default
    stream once CUDA is: that is where a fresh context starts.
    """
    if expected.device is None and now.device is not None:
        expected = attrs.evolve(expected, device=PINNED_DEVICE, stream=_default_stream_id())
    found = []
    for field in attrs.fields(TorchState):
        got, want = getattr(now, field.name), getattr(expected, field.name)
        if got != want:
            found.append(f"{LABELS[field.name]} {got} (pinned {want})")
    return found


def _default_stream_id() -> int | None:
    import torch

    try:
        return torch.cuda.default_stream(PINNED_DEVICE).stream_id
    except Exception:
        return None


def changes(expected: TorchState) -> list[str]:
    """How torch's global switches differ now from ``expected`` (a :func:`pin`
    reading), e.g. ``default dtype torch.float64 (pinned torch.float32)``."""
    return differences(current(), expected)


class StateChanged(Exception):
    """Plugin code changed torch's global state: its own case fails with this."""

    def __init__(self, found: list[str]):
        self.changes = found
        super().__init__(f"plugin changed global state: {'; '.join(found)}")


def raise_on_changes(expected: TorchState) -> None:
    """Raise :class:`StateChanged` if anything differs from ``expected``, or
    if plugin code replaced what judges it (:mod:`gemmreg.discovery.judge_state`,
    put back before raising, so the next plugin is judged as before)."""
    found = changes(expected) + replaced_judge()
    if found:
        raise StateChanged(found)


def replaced_judge() -> list[str]:
    """What plugin code replaced of what judges it, put back where it can be."""
    from gemmreg.discovery import judge_state

    found = judge_state.changes()
    if found:
        judge_state.restore()
    return found


def checked(launch: _Launch, expected: TorchState) -> _Launch:
    """``launch``, followed by :func:`raise_on_changes` after every call."""

    def checked_launch(*args: object, **kwargs: object) -> object:
        result = launch(*args, **kwargs)
        raise_on_changes(expected)
        return result

    return checked_launch  # type: ignore[return-value]
