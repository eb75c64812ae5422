"""``gemmreg bench --ray ADDRESS``: a sweep on a Ray cluster, a point per Ray task.

Each point is one Ray task holding one GPU (:mod:`gemmreg.running.ray_cluster`):
on its node it reads the plugins (installed there), starts a pool of
timing workers (gemmreg's own worker subprocesses, on the task's GPU) and
times the point exactly as the local sweep does (:func:`time_point`). The
reports stream back through ``ray.wait``; the run is saved atomically as
each arrives (partial until the last). A point whose Ray task died more
than :data:`~gemmreg.running.ray_cluster.MAX_RETRIES` times is reported
lost (``lost_points`` in the manifest; the run stays partial). Each report
names the GPU model it ran on, and the tables get one section per model.

Each task starts its own pool: a few seconds of worker start-up a point,
which the local sweep pays once (docs/multi-gpu.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from gemmreg.contract.backend import BackendInfo
from gemmreg.contract.records import Problem
from gemmreg.deciding.timing_options import TimingOptions
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.judging.timing_records import CompareReport
from gemmreg.orchestrating.progress import Meter
from gemmreg.orchestrating.sweeping import Progress, Sweep, flag_shared, save, time_point
from gemmreg.rendering import render_points
from gemmreg.running import environment, ray_cluster, worker_pool


def time_point_on_node(
    names: list[str], problem: Problem, timing: TimingOptions, switches: dict[str, str]
) -> tuple[CompareReport, dict[str, Any]]:
    """In a Ray task: the point timed on this node's GPU, and the node's record."""
    from gemmreg.contract import backend
    from gemmreg.discovery import registry

    os.environ.update(switches)
    info = backend.current()
    kernels = registry.discover().select(names)
    node = ray_cluster.node_record()
    pool = worker_pool.Pool(size=timing.processes, env=dict(os.environ), gpu=info.is_gpu)
    pool.start()
    try:
        report = time_point(kernels, problem, timing, info, lambda line: None, "", pool)
    finally:
        pool.close()
    report = attrs.evolve(
        report, device_name=node["device_name"], device_index=node["device_index"]
    )
    return report, node


def sweep_on_ray(
    kernels: Sequence[RegisteredKernel],
    problems: Sequence[Problem],
    timing: TimingOptions,
    info: BackendInfo,
    out: Path,
    progress: Progress,
    where: str,
    meter: Meter | None = None,
    weights: Sequence[float] | None = None,
    **manifest_fields: Any,
) -> Sweep:
    """Every point as a Ray task on the cluster at ``where``, saved as it
    arrives; ``meter``, ``weights`` and ``manifest_fields`` as with
    :func:`gemmreg.orchestrating.sweeping.sweep`."""
    try:
        with ray_cluster.connected(where) as ray:  # Ray's messages are not output
            return _sweep(
                ray, kernels, problems, timing, info, out, progress, manifest_fields, weights, meter
            )
    finally:
        if meter is not None:
            meter.close()


def _sweep(
    ray: Any,
    kernels: Sequence[RegisteredKernel],
    problems: Sequence[Problem],
    timing: TimingOptions,
    info: BackendInfo,
    out: Path,
    progress: Progress,
    manifest_fields: dict[str, Any],
    weights: Sequence[float] | None = None,
    meter: Meter | None = None,
) -> Sweep:
    names = [k.name for k in kernels]
    remote = ray.remote(time_point_on_node).options(
        max_retries=ray_cluster.MAX_RETRIES,
        retry_exceptions=False,
        **ray_cluster.holds(info.is_gpu),
    )
    switches = environment.switches()
    waiting = {remote.remote(names, p, timing, switches): i for i, p in enumerate(problems)}
    manifest = environment.manifest(kernels, seed=timing.seed, **manifest_fields)
    done: dict[int, CompareReport] = {}
    nodes: dict[str, dict[str, Any]] = {}
    lost: list[str] = []
    pending = list(waiting)
    while pending:
        finished, pending = ray.wait(pending, num_returns=1)
        index = waiting[finished[0]]
        problem = problems[index]
        label = f"[{index + 1}/{len(problems)}] {problem.shape} {problem.dtype}"
        try:
            report, node = ray.get(finished[0])
        except ray.exceptions.RayError as error:
            lost.append(f"{label}: {ray_cluster.lost_outcomes(1, error)[0].error}")
            progress(f"{lost[-1]}")
            continue
        nodes[str(node.get("host"))] = node
        progress(f"{label}: timed on {node['host']} ({node['device_name']})")
        if weights is not None:
            report = attrs.evolve(report, weight=weights[index])
        done[index] = flag_shared(report, manifest, progress)
        for line in render_points.point_lines(report, f"{label}: "):
            progress(line)  # before the save: a full disk loses no figure
        if meter is not None and not report.partial:
            meter.advance(float(problem.flops))
        manifest.update(ray_nodes=list(nodes.values()), lost_points=lost)
        save(out, manifest, [done[i] for i in sorted(done)], len(done) < len(problems))
    manifest.update(ray_nodes=list(nodes.values()), lost_points=lost)
    reports = [done[i] for i in sorted(done)]
    partial = len(done) < len(problems)
    if reports:
        save(out, manifest, reports, partial)
    return Sweep(reports=tuple(reports), partial=partial)
