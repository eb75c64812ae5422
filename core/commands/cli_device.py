"""``--devices`` (and ``--device N``, its shorthand for one GPU) on ``check``,
``compare`` and ``bench``: one GPU named pins the whole run to it, in this
process's environment before any work (:mod:`gemmreg.workers.device_choice`),
and is refused when it leaves no GPU; several GPUs are resolved once torch
can count them (:func:`gemmreg.commands.launching.spread_over`)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from gemmreg.contract.options import UsageError
from gemmreg.workers import device_choice

if TYPE_CHECKING:
    from gemmreg.contract.backend import BackendInfo


def choose(args: argparse.Namespace) -> None:
    """Pin this process's environment (inherited by every worker) to the one
    GPU ``--device N`` or ``--devices N`` names, before torch is imported.
    Several GPUs are left to the command: each of its workers is pinned.
    A ``GEMMREG_DEVICE`` other than ``cpu`` is refused here, first."""
    from gemmreg.contract import backend

    backend.check_force_env(os.environ)
    given = device_choice.chosen(getattr(args, "device", None), getattr(args, "devices", None))
    if given is None:
        return
    option, choice = given
    index = device_choice.single(choice)
    if index is None:
        return
    from gemmreg.workers.devices import pin_device_env

    device_choice.check_visible(option, index, os.environ)
    pinned = pin_device_env(os.environ, index)
    os.environ.update(pinned)
    args.device_option, args.pinned_device = option, index
    args.device_environment = {k: pinned[k] for k in device_choice.VISIBLE_ENVS}


def several(args: argparse.Namespace) -> str | None:
    """``--devices`` when it spreads the work over several GPUs; None when it
    pinned the run to one (:func:`choose`) or was not given."""
    if getattr(args, "pinned_device", None) is not None:
        return None
    value: str | None = getattr(args, "devices", None)
    return value


def require_gpu(args: argparse.Namespace, info: BackendInfo) -> None:
    """A run pinned to one GPU that left no GPU (or was forced onto the CPU) is refused."""
    index = getattr(args, "pinned_device", None)
    if index is not None and not info.is_gpu:
        environment = getattr(args, "device_environment", {})
        raise UsageError(device_choice.not_found(args.device_option, index, environment))


def ray_address(args: argparse.Namespace) -> str | None:
    """The Ray cluster ``--ray`` (or ``GEMMREG_RAY_ADDRESS``) names, or None;
    refused with ``--devices``/``--device`` and where Ray is not installed."""
    from gemmreg.fanout import ray_cluster

    where = ray_cluster.address(getattr(args, "ray", None))
    if where is None:
        return None
    if args.devices is not None or args.device is not None:
        raise UsageError("--ray and --devices: one or the other (Ray gives each task its GPU)")
    ray_cluster.require()
    return where
