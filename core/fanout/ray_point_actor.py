"""The Ray actor of ``bench --ray``: one per GPU, holding a warm pool of
timing workers that serves every point sent to it.

A point's cost below the largest shapes is mostly fixed: starting a pool
(each worker imports torch, reads the plugins, makes its GPU context) took
about as long as timing a small point on the H200 (23 s a point through a
Ray task that started its own pool, against 7 s in a pooled run). So, as
``bench --devices`` keeps one pool per GPU across points
(:mod:`gemmreg.fanout.sharded_sweep`), a :class:`PointTimer` is a
long-lived Ray actor holding one GPU (``num_gpus=1``; Ray pins the actor
and so its workers by ``CUDA_VISIBLE_DEVICES``) and one
:class:`~gemmreg.timing.worker_pool.Pool` started once, in its
constructor; every point it is handed is timed on that pool exactly as the
local sweep times it (:func:`~gemmreg.fanout.sweeping.time_point`:
same seeds, same protocol, dead workers replaced between points).

The plugin code still runs in gemmreg's worker subprocesses, never in the
actor: a kernel that crashes costs its process's figures, as on one host.
An actor whose process or node dies loses only the point it was timing;
the driver (:mod:`gemmreg.fanout.ray_sweep`) hands that point to
another actor.
"""

from __future__ import annotations

import os
from typing import Required

import attrs
from gemmreg.contract.records import Problem
from gemmreg.fanout import ray_cluster
from gemmreg.fanout.ray_cluster import NodeRecord
from gemmreg.fanout.sweeping import time_point
from gemmreg.timing import worker_pool
from gemmreg.timing.timing_options import TimingOptions
from gemmreg.timing.timing_records import CompareReport


class ActorNode(NodeRecord, total=False):
    """An actor's node record: the node's (:func:`~gemmreg.fanout.ray_cluster.node_record`),
    the actor's pid, and, beside a timed point, the points it has served."""

    actor_pid: Required[int]
    points: int


class PointTimer:
    """A Ray actor (wrapped by ``ray.remote`` in the driver): the kernels
    ``names`` read from the node's installed plugins, and a pool of
    ``timing.processes`` timing workers on the actor's GPU, started at once."""

    def __init__(self, names: list[str], timing: TimingOptions, switches: dict[str, str]):
        from gemmreg.contract import backend
        from gemmreg.discovery import registry

        os.environ.update(switches)
        self.timing = timing
        self.info = backend.current()
        self.kernels = registry.discover().select(names)
        self.node: ActorNode = {**ray_cluster.node_record(), "actor_pid": os.getpid()}
        self.pool = worker_pool.Pool(
            size=timing.processes, env=dict(os.environ), gpu=self.info.is_gpu
        )
        self.pool.start()  # its workers start while the driver hands out points
        self.points = 0

    def ready(self) -> ActorNode:
        """This actor's node record (host, GPU, versions, the actor's pid),
        once it is up: the driver hands it a point only then."""
        return self.node

    def time(self, problem: Problem) -> tuple[CompareReport, ActorNode]:
        """``problem`` timed on this actor's pool; the report names the GPU
        it ran on, and the node record counts the points served so far."""
        report = time_point(
            self.kernels, problem, self.timing, self.info, lambda line: None, "", self.pool
        )
        self.points += 1
        report = attrs.evolve(
            report, device_name=self.node["device_name"], device_index=self.node["device_index"]
        )
        return report, {**self.node, "points": self.points}

    def close(self) -> None:
        """Let the pool's workers finish (the driver then ends the actor)."""
        self.pool.close()
