"""The GPUs of this host, and a worker pinned to one of them.

A worker is pinned by its environment, before it imports torch: its
``CUDA_VISIBLE_DEVICES`` (and ROCm's ``HIP_VISIBLE_DEVICES``) names one GPU,
which the worker then sees as its device 0. Nothing else in the core knows
which GPU it is on; every record of a run names the device the parent pinned
the work to (:class:`Device`).

Devices are grouped by model (:func:`groups`): figures are only ever compared
within one model, so a sweep over two models is two sweeps, one per model,
each sharded over that model's GPUs.

:data:`FAKE_DEVICES_ENV` is a test hook, read here and nowhere else: on a
machine without GPUs it lists pretend devices by model name, so the
sharding, merging and rendering paths run for real in CI, each worker
pinned (by the same environment) to a GPU that does not exist.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence

import attrs
from gemmreg.contract.options import UsageError
from gemmreg.workers.device_choice import ALL, VISIBLE_ENVS, DeviceChoice, visible_entries

FAKE_DEVICES_ENV = "GEMMREG_FAKE_DEVICES"
"""Test hook: comma-separated model names, one pretend GPU each
(``"NVIDIA H200,NVIDIA H200"``). Set, it replaces the host's own GPUs."""
PINNED_ENV = "GEMMREG_PINNED_DEVICE"
"""Set in a pinned worker's environment: the index (in the parent's
numbering) of the one GPU it sees, for its log and for tests."""


@attrs.frozen
class Device:
    index: int
    """torch's index of the GPU in the parent process."""
    name: str
    """Its model, as torch names it: the unit figures are comparable within."""

    @property
    def label(self) -> str:
        return f"gpu{self.index}"


def fake_devices(env: Mapping[str, str] | None = None) -> list[Device] | None:
    """The pretend devices of :data:`FAKE_DEVICES_ENV`, or None when unset."""
    value = (os.environ if env is None else env).get(FAKE_DEVICES_ENV, "").strip()
    if not value:
        return None
    return [Device(i, name.strip() or "fake") for i, name in enumerate(value.split(","))]


def available_devices(gpu: bool, cpu_name: str = "cpu") -> list[Device]:
    """This host's GPUs in torch's numbering (the fake ones under the test
    hook); with no GPU, the CPU as the one device there is."""
    fake = fake_devices()
    if fake is not None:
        return fake
    if not gpu:
        return [Device(0, cpu_name)]
    import torch

    return [Device(i, torch.cuda.get_device_name(i)) for i in range(torch.cuda.device_count())]


def resolve(choice: DeviceChoice, available: Sequence[Device]) -> list[Device]:
    """The devices ``--devices`` chose, checked against those that exist."""
    if choice == ALL:
        return list(available)
    by_index = {d.index: d for d in available}
    missing = [i for i in choice if i not in by_index]
    if missing:
        have = ", ".join(str(d.index) for d in available) or "none"
        raise UsageError(f"--devices: no device {missing[0]} here (devices: {have})")
    return [by_index[i] for i in choice]


def groups(devices: Sequence[Device]) -> dict[str, list[Device]]:
    """The devices by model, in the order each model first appears."""
    grouped: dict[str, list[Device]] = {}
    for device in devices:
        grouped.setdefault(device.name, []).append(device)
    return grouped


def pin_device_env(env: Mapping[str, str], device: Device | int) -> dict[str, str]:
    """``env`` for a process that sees only ``device`` (or the GPU of that
    index): the one place a process is pinned, a worker of ``--devices`` or
    the whole run of ``--device N``. Where ``env`` already restricts the
    visible GPUs (the user's own ``CUDA_VISIBLE_DEVICES=2,3``), torch's index
    ``i`` is that list's ``i``-th entry, so the pin stays inside the user's
    choice (:func:`gemmreg.workers.device_choice.check_visible` refuses an
    index past it)."""
    index = device if isinstance(device, int) else device.index
    pinned = dict(env)
    restricted = visible_entries(env)
    visible = restricted[1] if restricted else []
    physical = visible[index] if index < len(visible) else str(index)
    for name in VISIBLE_ENVS:  # both set alike: ROCm reads either
        pinned[name] = physical
    pinned[PINNED_ENV] = str(index)
    return pinned


JOIN_POLL_S = 0.2
"""How often the main thread wakes while it waits for the device threads, so
that Ctrl-C reaches it (a blocked join would not see it)."""


def run_threads(threads: Sequence[threading.Thread]) -> None:
    """Start every device thread and wait for them all, waking every
    :data:`JOIN_POLL_S` so that a KeyboardInterrupt reaches the caller, who
    then stops the threads its own way."""
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(JOIN_POLL_S)


def pinned_index(env: Mapping[str, str] | None = None) -> int | None:
    """The GPU index this process was pinned to by :func:`pin_device_env`
    (``--device N`` pins the whole command), or None: a report timed here
    then records the GPU it ran on, not the only one it could see."""
    value = (os.environ if env is None else env).get(PINNED_ENV, "")
    return int(value) if value.isdigit() else None


def spread(chosen: Sequence[Device]) -> Callable[[dict[str, str], int], dict[str, str]]:
    """Process ``i`` of a comparison pinned to ``chosen[i % len(chosen)]``
    (``compare --devices``: GPUs of one model, checked by the caller)."""

    def pin(env: dict[str, str], process: int) -> dict[str, str]:
        return pin_device_env(env, chosen[process % len(chosen)])

    return pin


def one_model(chosen: Sequence[Device], command: str) -> None:
    """Refuse GPUs of several models where one answer pairs their figures."""
    models = list(groups(chosen))
    if len(models) > 1:
        raise UsageError(
            f"{command} --devices: GPUs of one model only (its verdict pairs their "
            f"figures), got {' and '.join(models)}"
        )


def described(
    devices: Sequence[Device], uuid: Callable[[int], str | None] | None = None
) -> list[dict[str, object]]:
    """The devices as a manifest records them, each with its UUID where torch
    knows it (``uuid``: torch index -> ``GPU-...``; by default torch's own),
    so a run spread over several GPUs names its cards as a one-GPU run's
    manifest names its one (``gpu.uuid``)."""
    from gemmreg.instruments.gpu_monitor import device_uuid

    named = device_uuid if uuid is None else uuid
    out: list[dict[str, object]] = []
    for d in devices:
        entry: dict[str, object] = {"index": d.index, "name": d.name}
        card = named(d.index)
        if card:
            entry["uuid"] = card
        out.append(entry)
    return out
