"""Workers of ``compare --devices`` and ``bench --devices`` started ahead, pinned.

On one GPU a timing command starts its workers before it imports torch and
reads the plugins (:class:`gemmreg.timing.worker_pool.Ahead`): a worker takes
as long to start as that, so the two overlap. Spread over several GPUs the
workers must be pinned first (:func:`gemmreg.workers.devices.pin_device_env`),
and a pin needs only the GPU's index, not torch: ``--devices 0,1`` names the
indices, and ``--devices all`` is counted without torch where that can be
done (:func:`guess_indices`: the test hook's pretend devices, the entries of
a ``CUDA_VISIBLE_DEVICES`` the user set, else NVIDIA's ``/dev/nvidiaN``
nodes). Started on that guess, they are used only when the GPUs the command
resolves once torch is up are exactly those indices (:func:`fits`);
otherwise they are killed unused and the command starts its own, as before.
Where no guess can be made (a ROCm host with ``--devices all``) nothing
starts ahead.

- ``compare --devices``: the cold starts on the first GPU, the pool's
  process ``i`` on GPU ``i mod n``, exactly as the command pins them
  (:func:`gemmreg.workers.devices.spread`).
- ``bench --devices``: one pool per GPU (:class:`PoolsAhead`), the pools
  :mod:`gemmreg.fanout.sharded_sweep` would start.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import attrs
from gemmreg.contract.options import UsageError
from gemmreg.timing import worker_pool
from gemmreg.workers import devices
from gemmreg.workers.device_choice import ALL, parse_devices, visible_entries
from gemmreg.workers.tracing import trace

NVIDIA_NODES = "/dev/nvidia[0-9]*"
"""NVIDIA's per-GPU device nodes: one per GPU of the host, counted for
``--devices all`` without importing torch."""


def guess_indices(value: str, env: Mapping[str, str] | None = None) -> list[int] | None:
    """The GPU indices ``--devices value`` will resolve to, without torch, or
    None where they cannot be known yet (nothing is then started ahead)."""
    environ = os.environ if env is None else env
    try:
        choice = parse_devices(value)
    except UsageError:
        return None  # refused later, in its place, with its line
    if choice != ALL:
        return list(choice)
    fake = devices.fake_devices(environ)
    if fake is not None:
        return [d.index for d in fake]
    restricted = visible_entries(environ)
    if restricted is not None:
        return list(range(len(restricted[1])))
    nodes = [n for n in glob.glob(NVIDIA_NODES) if re.fullmatch(r"nvidia\d+", os.path.basename(n))]
    return list(range(len(nodes))) or None


def fits(indices: Sequence[int], chosen: Sequence[devices.Device]) -> bool:
    """Whether workers started ahead for ``indices`` serve the GPUs resolved."""
    return list(indices) == [d.index for d in chosen]


def start_ahead(
    several: str, names: Sequence[str], processes: int, gpu: bool, cold: bool
) -> worker_pool.Ahead | PoolsAhead | None:
    """The workers of ``compare --devices several`` (``cold``: its cold
    starts too) or ``bench --devices several``, pinned and started now; None
    where the GPUs cannot be known yet."""
    indices = guess_indices(several)
    if indices is None:
        return None
    trace(f"starting workers ahead, pinned to GPUs {indices}")
    if cold:
        return start_ahead_spread(names, processes, gpu, indices)
    return start_ahead_per_device(indices, processes, gpu)


AheadT = TypeVar("AheadT", worker_pool.Ahead, "PoolsAhead")


def unless_other_gpus(
    ahead: AheadT | None, several: str | None, chosen: Sequence[devices.Device] | None
) -> AheadT | None:
    """Workers started ahead on a guess of ``--devices``' GPUs, killed unused
    where the command resolved others (None then: it starts its own)."""
    if ahead is None or several is None:
        return ahead
    if fits(guess_indices(several) or [], chosen or []):
        return ahead
    ahead.abandon()
    return None


def spread_pin(indices: Sequence[int]) -> Callable[[dict[str, str], int], dict[str, str]]:
    """Process ``i`` pinned to ``indices[i % n]``: :func:`gemmreg.workers.devices.spread`
    by index alone."""

    def pin(env: dict[str, str], process: int) -> dict[str, str]:
        return devices.pin_device_env(env, indices[process % len(indices)])

    return pin


def start_ahead_spread(
    names: Sequence[str], processes: int, gpu: bool, indices: Sequence[int]
) -> worker_pool.Ahead:
    """``compare --devices``'s workers: a cold-start session per name on the
    first GPU, the pool's processes spread over ``indices``."""
    return worker_pool.start_ahead(names, processes, gpu, pin=spread_pin(indices))


@attrs.define
class PoolsAhead:
    """``bench --devices``'s pools, one per GPU index, started ahead."""

    pools: dict[int, worker_pool.Pool]

    def take(self, size: int, gpu: bool) -> dict[int, worker_pool.Pool]:
        """The pools, resized to what the sweep turned out to need."""
        for pool in self.pools.values():
            pool.fit(size, gpu)
        return self.pools

    def abandon(self) -> None:
        """Unused (the command failed, or resolved other GPUs): killed now."""
        for pool in self.pools.values():
            for session in pool.everyone():
                session.kill()
            pool.sessions, pool.profilers = [], []
        self.pools = {}


def start_ahead_per_device(indices: Sequence[int], processes: int, gpu: bool) -> PoolsAhead:
    """A pool of ``processes`` timing workers (and a profiler on a GPU) pinned
    to each of ``indices``, all starting at once."""
    pools = {
        index: worker_pool.Pool(
            size=processes, env=devices.pin_device_env(os.environ, index), gpu=gpu
        )
        for index in indices
    }
    for pool in pools.values():
        pool.start()
    return PoolsAhead(pools=pools)
