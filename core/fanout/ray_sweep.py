"""``gemmreg bench --ray ADDRESS``: a sweep on a Ray cluster, served by one
warm actor per GPU.

Each GPU of the cluster gets a :class:`~gemmreg.fanout.ray_point_actor.PointTimer`:
a Ray actor holding that GPU and a pool of timing workers on it, started
once and kept for the whole sweep, as ``bench --devices`` keeps a pool per
GPU (a point timed through a Ray task that started its own pool took about
3x as long on the H200). The driver hands out the points in the order asked,
one at a time to whichever actor is free (:class:`Dispatch`): a GPU never
times two points at once and every point is timed exactly as the local
sweep times it. The reports stream back through ``ray.wait``; the run is
saved atomically as each arrives (partial until the last). Each report
names the GPU model it ran on, and the tables get one section per model.

An actor whose process or node dies loses only the point it was timing:
that point goes to the next free actor, :data:`POINT_RETRIES` time(s)
(``retried_points`` in the manifest), after which it is reported lost
(``lost_points``, with the reason; the run stays partial and says why).
A replacement actor is started for each one lost while points wait, up to
:data:`~gemmreg.fanout.ray_cluster.MAX_RETRIES` per GPU.

A save the storage refuses stops the sweep as on one GPU: no point is handed
out after it (:meth:`Dispatch.stop`), the points in flight come back and
print their figures (measured, not saved), and the sweep returns them all
with the refusal (:mod:`gemmreg.fanout.sweep_saves`).
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

import attrs
from gemmreg.contract.batching import shown_shape
from gemmreg.fanout import ray_cluster
from gemmreg.fanout.jobs import SweepJob
from gemmreg.fanout.ray_dispatch import Dispatch, Lost
from gemmreg.fanout.sweep_saves import Saves
from gemmreg.fanout.sweeping import Sweep, flag_shared
from gemmreg.instruments import environment
from gemmreg.reporting import render_points
from gemmreg.timing.timing_records import CompareReport

if TYPE_CHECKING:
    from gemmreg.fanout.ray_point_actor import ActorNode

POINT_RETRIES = 1
"""Times a point whose actor died under it is handed to another actor. Once
covers a node or worker lost by accident; a point that kills its actor
every time (a kernel that brings its worker's parent down) must not take
every GPU of the cluster down in turn."""


def sweep_on_ray(job: SweepJob, where: str) -> Sweep:
    """Every point of ``job`` on the cluster at ``where``, served by one warm
    actor per GPU and saved as it arrives; the job's ``meter``, ``weights``
    and ``fields`` as with :func:`gemmreg.fanout.sweeping.sweep` (its
    ``ahead`` is none: each actor starts its pool on its node)."""
    try:
        with ray_cluster.connected(where) as ray:  # Ray's messages are not output
            return _sweep(ray, job)
    finally:
        if job.meter is not None:
            job.meter.close()


def _sweep(ray: ModuleType, job: SweepJob) -> Sweep:
    from gemmreg.fanout.ray_point_actor import PointTimer

    kernels, problems, timing, info = job.kernels, job.problems, job.timing, job.info
    out, progress, meter, weights = job.out, job.progress, job.meter, job.weights
    names = [k.name for k in kernels]
    actor_class = ray.remote(PointTimer).options(
        max_restarts=0, max_task_retries=0, **ray_cluster.holds(info.is_gpu)
    )
    switches = environment.switches()
    gpus = max(1, min(len(problems), ray_cluster.gpu_count(ray, info.is_gpu)))
    # Taken before any actor starts: the actors' workers are not in this
    # process's tree, so NVML would list them as other processes on the GPU.
    manifest = environment.manifest(kernels, seed=timing.seed, **job.fields)
    done: dict[int, CompareReport] = {}
    actors: dict[tuple[str, int], ActorNode] = {}
    lost: list[str] = []
    retried: list[str] = []
    saves = Saves(out, manifest)

    def label(index: int) -> str:
        problem = problems[index]
        return f"[{index + 1}/{len(problems)}] {shown_shape(problem)} {problem.number_format}"

    def saved() -> None:
        manifest.update(ray_nodes=list(actors.values()), lost_points=lost, retried_points=retried)
        if lost:
            manifest["stopped"] = f"{len(lost)} point(s) lost on the cluster (lost_points)"
        reports = [done[i] for i in sorted(done)]
        if reports and not saves.save(reports, len(done) < len(problems)):
            dispatch.stop()  # the storage refused it: the points in flight still print

    def arrived(index: int, result: tuple[CompareReport, ActorNode]) -> None:
        report, node = result
        actors[(str(node.get("host")), int(node.get("actor_pid", 0)))] = node
        where = f"{node['host']} ({node['device_name']}, actor {node.get('actor_pid')})"
        progress(f"{label(index)}: timed on {where}")
        if weights is not None:
            report = attrs.evolve(report, weight=weights[index])
        done[index] = flag_shared(report, manifest, progress)
        for line in render_points.point_lines(report, f"{label(index)}: "):
            progress(line)  # before the save: a full disk loses no figure
        if meter is not None and not report.partial:
            meter.advance(float(problems[index].flops))
        saved()

    def retrying(index: int, why: str) -> None:
        retried.append(f"{label(index)}: {why}")
        progress(f"{label(index)}: its actor was lost ({why}); handed to another actor")

    def gave_up(failure: Lost) -> None:
        lost.append(f"{label(failure.index)}: {failure.reason}")
        progress(lost[-1])
        saved()

    dispatch = Dispatch(
        ray=ray,
        start=lambda: actor_class.remote(names, timing, switches),
        send=lambda actor, index: actor.time.remote(problems[index]),
        spares=ray_cluster.MAX_RETRIES * gpus,
        retries=POINT_RETRIES,
    )
    dispatch.run(len(problems), gpus, arrived, retrying, gave_up)
    saved()
    saves.note()
    partial = len(done) < len(problems) or (saves.refused is not None and saves.kept_partial)
    reports = tuple(done[i] for i in sorted(done))
    return Sweep(reports=reports, partial=partial, not_saved=saves.refused, manifest=manifest)
