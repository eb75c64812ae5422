"""``--device N`` on ``check``, ``compare`` and ``bench``: the option, the
environment set before any work (:mod:`gemmreg.deciding.device_choice`), and
the refusal when it leaves no GPU."""

from __future__ import annotations

import argparse
import os
from typing import Any

from gemmreg.deciding import device_choice
from gemmreg.deciding import options as opt
from gemmreg.deciding.options import UsageError


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--device",
        type=opt.integer("--device", 0, device_choice.MAX_DEVICE_INDEX),
        default=None,
        metavar="N",
        help="the GPU to run on, counted as CUDA (or ROCm) numbers those visible "
        "(default: device 0); every worker gets CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES "
        "on ROCm) narrowed to it, and the manifest records it",
    )


def choose(args: argparse.Namespace) -> None:
    """Narrow the visible devices to ``--device``'s, in this process's
    environment (inherited by every worker), before torch is imported."""
    index = getattr(args, "device", None)
    if index is None:
        return
    chosen = device_choice.visible_devices(index, os.environ, device_choice.rocm_likely())
    os.environ.update(chosen)
    args.device_environment = chosen


def require_gpu(args: argparse.Namespace, info: Any) -> None:
    """A ``--device`` that left no GPU (or a run forced onto the CPU) is refused."""
    index = getattr(args, "device", None)
    if index is not None and not info.is_gpu:
        raise UsageError(device_choice.not_found(index, getattr(args, "device_environment", {})))
