"""Where a command's work runs: one interface, :class:`Executor`, for ``bench``,
``compare`` and ``check``, chosen once (:func:`built_in`, from ``--devices``
and ``--ray``), so that no command asks again where its work goes.

The work comes in units, and an executor decides where each one runs:

- ``bench``: a **point** (:class:`SweepJob`): every kernel timed on one
  problem, all of a point's processes on one pool of one GPU model;
- ``compare``: a **process** (:class:`CompareJob`): one timed process of the
  comparison, after every kernel's cold start;
- ``check``: a **shard** (:class:`CheckJob`): one kernel's batch of cases,
  kept together so that the rules spanning them (a hang skips the rest)
  hold wherever it runs.

A job is submitted whole, and the executor hands its units out as it can.
Results come back as they settle, through the job's callbacks (a point's
lines and its save, each case to ``on_result``), then all together as the
method's return, in the order asked. A unit that fails comes back as a
result that says so, never as an exception: a point lost or cut short
leaves the sweep partial (and, on Ray, under ``lost_points``), a process
lost is a record with its reason, a shard's lost cases are crashes. An
exception is the command's own error, and Ctrl-C is KeyboardInterrupt.

The built-in ones run the runners made for them: :class:`Local` (one pool
here), :class:`Devices` (a pool per GPU here) and :class:`Ray` (warm actors
for points, a Ray task per process or shard). Any object with these methods
can be handed to a command instead (``Launch(executor=...)``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import attrs
from gemmreg.checking.check_runner import CaseResult
from gemmreg.checking.matrix import Case
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.fanout.jobs import CompareJob as CompareJob  # re-exported: an executor's input
from gemmreg.fanout.jobs import SweepJob as SweepJob
from gemmreg.fanout.sweeping import Sweep
from gemmreg.timing.timing_records import CompareReport
from gemmreg.workers.devices import Device

Compared = tuple[CompareReport, dict[str, object]]
"""A comparison's report and its manifest (not saved yet)."""

BatchDone = Callable[[list[CaseResult], dict[str, object]], None]
"""Told, after each shard where the executor saves as it goes, the results
so far (in the order of the kernels) and what it adds to the manifest."""


@attrs.frozen(kw_only=True)
class CheckJob:
    """``check``'s shards: each kernel's batch of ``cases``."""

    kernels: Sequence[RegisteredKernel]
    cases: Sequence[Case]
    gpu: bool
    on_result: Callable[[CaseResult], None] | None = None
    """Each result as it settles, one at a time."""
    task_timeout: float | None = None
    on_batch: BatchDone | None = None


@attrs.frozen
class Checked:
    """A check's results, in the order of its kernels, and what the executor
    adds to the check's manifest (Ray: the nodes that ran a shard)."""

    results: list[CaseResult]
    manifest: dict[str, object] = attrs.field(factory=dict)


class Executor(Protocol):
    """Where a command's work runs (the module's docstring says how)."""

    @property
    def gpus(self) -> Sequence[Device]:
        """The GPUs of this host it spreads work over, a pool each; or none."""

    def sweep(self, job: SweepJob) -> Sweep:
        """Every point of ``job``, the run saved as each one finishes."""

    def compare(self, job: CompareJob) -> Compared:
        """``job``'s comparison, and its manifest."""

    def check(self, job: CheckJob) -> Checked:
        """Every shard of ``job``."""


@attrs.frozen
class Local:
    """One pool of workers on this host, serving every point in turn; a
    comparison's processes one after another; every shard in turn."""

    @property
    def gpus(self) -> tuple[Device, ...]:
        return ()

    def sweep(self, job: SweepJob) -> Sweep:
        from gemmreg.fanout import sweeping

        return sweeping.sweep(job)

    def compare(self, job: CompareJob) -> Compared:
        from gemmreg.fanout import sweeping

        return sweeping.compare(job)

    def check(self, job: CheckJob) -> Checked:
        from gemmreg.checking import check_runner

        results: list[CaseResult] = []

        def record(result: CaseResult) -> None:
            results.append(result)
            if job.on_result is not None:
                job.on_result(result)

        check_runner.run_check(
            job.kernels, job.cases, job.gpu, on_result=record, task_timeout=job.task_timeout
        )
        return Checked(results)


@attrs.frozen
class Devices:
    """A pool per GPU of ``gpus`` (``--devices``): each takes the next point
    (every point once per GPU model) or the next shard; a comparison's
    process ``i`` runs on ``gpus[i % n]``, one per GPU at a time."""

    gpus: tuple[Device, ...]

    def sweep(self, job: SweepJob) -> Sweep:
        from gemmreg.fanout import sharded_sweep

        return sharded_sweep.sweep_on_devices(job, self.gpus)

    def compare(self, job: CompareJob) -> Compared:
        from gemmreg.fanout import sweeping

        return sweeping.compare(job, self.gpus)

    def check(self, job: CheckJob) -> Checked:
        from gemmreg.checking import check_shards

        return Checked(
            check_shards.check_on_devices(
                job.kernels,
                job.cases,
                job.gpu,
                self.gpus,
                on_result=job.on_result,
                task_timeout=job.task_timeout,
            )
        )


@attrs.frozen
class Ray:
    """The Ray cluster at ``address``: a warm actor per GPU takes the next
    point, each process and each shard is a Ray task holding one GPU."""

    address: str

    @property
    def gpus(self) -> tuple[Device, ...]:
        return ()  # Ray gives each task its GPU

    def sweep(self, job: SweepJob) -> Sweep:
        from gemmreg.fanout import ray_sweep

        return ray_sweep.sweep_on_ray(job, self.address)

    def compare(self, job: CompareJob) -> Compared:
        from gemmreg.fanout import ray_compare

        return ray_compare.compare_on_ray(job, self.address)

    def held(self) -> contextlib.AbstractContextManager[None]:
        """The cluster connected for a command's every job (``compare``'s
        dtypes one after another), not once a job."""
        from gemmreg.fanout import ray_cluster

        return ray_cluster.held(self.address)

    def check(self, job: CheckJob) -> Checked:
        from gemmreg.fanout import ray_check

        def batch(so_far: list[CaseResult], nodes: list[Any]) -> None:
            if job.on_batch is not None:
                job.on_batch(so_far, {"ray_nodes": nodes})

        results, nodes = ray_check.check_on_ray(
            job.kernels,
            job.cases,
            job.gpu,
            self.address,
            job.on_result,
            job.task_timeout,
            on_batch=batch,
        )
        return Checked(results, {"ray_nodes": nodes})


def built_in(ray: str | None, chosen: Sequence[Device] | None) -> Executor:
    """The executor ``--ray`` (a cluster's address, checked already) or
    ``--devices`` (the GPUs it resolved to) chooses; one pool here without
    either. Ray refuses in one line where it is not installed."""
    if ray is not None:
        from gemmreg.fanout import ray_cluster

        ray_cluster.require()
        return Ray(ray)
    if chosen is not None:
        return Devices(tuple(chosen))
    return Local()
