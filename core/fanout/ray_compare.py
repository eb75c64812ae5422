"""``gemmreg compare --ray ADDRESS``: a comparison's processes on a Ray
cluster, each a Ray task holding one GPU, every GPU of one model.

The same comparison as on one host (:mod:`gemmreg.timing.compare_parts`:
the same tasks, order seeds, rows and verdicts), run through
:mod:`gemmreg.fanout.ray_cluster`:

1. **Cold starts**: one Ray task runs every kernel's cold start, one after
   another, each in its own fresh worker with empty caches, on one GPU,
   before any process is timed.
2. **Processes**: every timed process is one Ray task (``num_gpus=1``), so
   a GPU never holds two; they are submitted at once and run side by side
   on as many GPUs as the cluster gives. Each runs its rounds in gemmreg's
   own worker subprocess (a crash gets one rerun in a fresh one); its
   record names its host and GPU.
3. **Profiles** (on GPUs): one more Ray task, after the rounds.

A verdict pairs figures from every process, so the GPUs must be of one
model: a cluster whose nodes name several models is refused before any
work; a run whose processes came back from several anyway keeps its
figures and gives no verdict (:func:`unpaired`).
Differences from one host: a timed process starts with its node's own
compile caches, not those the cold starts filled; and all processes are
submitted at once, so a hang in one does not skip the others.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import attrs
from gemmreg.contract.backend import BackendInfo
from gemmreg.contract.options import UsageError
from gemmreg.contract.records import Problem
from gemmreg.fanout import ray_cluster
from gemmreg.fanout.jobs import CompareJob
from gemmreg.fanout.ray_cluster import NodeRecord
from gemmreg.fanout.sweeping import Progress, clock_description, flag_shared
from gemmreg.instruments import environment
from gemmreg.reporting.timing_lines import progress_hooks
from gemmreg.timing import cold_starts, compare_parts, device_processes, rounds, stats
from gemmreg.timing.device_processes import Profiles
from gemmreg.timing.timing_options import TimingOptions, policy_for
from gemmreg.timing.timing_records import ColdStart, CompareReport, ProcessRecord, ProcessRun
from gemmreg.workers import temp_folders, timeouts
from gemmreg.workers.sessions import Session
from gemmreg.workers.tasks import TaskOutcome

if TYPE_CHECKING:
    from ray import ObjectRef

InSession = tuple[TaskOutcome, str, NodeRecord]
"""What a Ray task of :func:`gemmreg.fanout.ray_cluster.run_in_session` returns."""

NEED = 2
"""Kernels that must come through their cold starts for any timing: a
verdict is about a pair (as ``compare`` on one host)."""


def cold_on_node(
    names: list[str], problem: Problem, seed: int, timeout: float, switches: dict[str, str]
) -> tuple[list[ColdStart], NodeRecord]:
    """In a Ray task: each kernel's cold start in its own fresh worker with
    empty caches, one after another on this task's GPU; and the node's record."""
    from gemmreg.discovery import registry

    os.environ.update(switches)
    kernels = registry.discover().select(names)
    with temp_folders.temporary_folder("caches") as tmp:
        root = Path(tmp)
        sessions = [Session(cold_starts.cold_env(root, name)) for name in names]
        try:
            for session in sessions:
                session.wait_ready()
            colds = cold_starts.run(kernels, sessions, problem, seed, root, timeout)
        finally:
            for session in sessions:
                session.close()
    return colds, ray_cluster.node_record()


def compare_on_ray(job: CompareJob, where: str) -> tuple[CompareReport, dict[str, object]]:
    """``job``'s point on the cluster at ``where``, cold starts first; and the
    manifest, with every node that ran a task under ``ray_nodes`` (its
    ``ahead`` and ``keep_cache`` are none: the tasks start their own workers,
    and no profiler runs after a comparison on Ray)."""
    with ray_cluster.connected(where) as ray:
        models = ray_cluster.gpu_models(ray)
        _one_model(models, "the cluster has")
        manifest = environment.manifest(job.kernels, seed=job.timing.seed)
        report, nodes = _compare(ray, job, models)
    manifest["ray_nodes"] = nodes
    return flag_shared(report, manifest, job.progress), manifest


def _one_model(models: Sequence[str], where: str) -> None:
    if len(set(models)) > 1:
        raise UsageError(
            f"compare --ray: GPUs of one model only (its verdict pairs their figures), "
            f"{where} {' and '.join(sorted(set(models)))}"
        )


def _compare(
    ray: ModuleType, job: CompareJob, models: Sequence[str]
) -> tuple[CompareReport, list[NodeRecord]]:
    kernels, problem, timing, info = job.kernels, job.problem, job.timing, job.info
    progress = job.progress
    gpu = info.is_gpu
    per_kernel = timing.task_timeout or timeouts.task_timeout_s(problem, gpu)
    cap = rounds.HARD_CAP_FACTOR * (timing.max_time_s or policy_for(gpu).stop.max_time_s)
    on_run, on_cold = progress_hooks(timing, progress, "", job.meter)
    switches = environment.switches()
    options = dict(max_retries=ray_cluster.MAX_RETRIES, retry_exceptions=False)
    on_gpu = {**options, **ray_cluster.holds(gpu)}
    runs, runnable = compare_parts.split_runnable(kernels, problem)
    nodes: dict[str, NodeRecord] = {}
    colds: list[ColdStart] = []
    done: dict[int, tuple[list[ProcessRun], ProcessRecord, str]] = {}
    profiles: Profiles = {}
    pending: list[ObjectRef[InSession]] = []
    partial = False
    try:
        if runnable:
            names = [k.name for k in runnable]
            cold = ray.remote(cold_on_node).options(**on_gpu)
            try:
                colds, node = ray.get(
                    cold.remote(names, problem, timing.seed, per_kernel, switches)
                )
                nodes[str(node.get("host"))] = node
            except ray.exceptions.RayError as error:
                why = ray_cluster.lost_outcomes(1, error)[0].error
                colds = [ColdStart(kernel=n, status="crashed", reason=why) for n in names]
            for each in colds:
                on_cold(each)
            failed = {c.kernel: c.status for c in colds if c.status != "ok"}
            runnable = [k for k in runnable if k.name not in failed]
            if failed and len(runnable) < NEED:
                runs += compare_parts.not_timed(runnable, failed, NEED, on_run)
                runnable = []
        names = [k.name for k in runnable]
        asked = _asked(problem, timing, info, models[0] if models else info.device_name)
        limit = timing.task_timeout or len(names) * per_kernel + cap
        task = ray.remote(ray_cluster.run_in_session).options(**on_gpu)
        count = timing.processes if runnable else 0
        waiting = {
            task.remote(asked.rounds_task(i, names), limit, switches): i for i in range(count)
        }
        pending = list(waiting)
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            process = waiting[finished[0]]
            rows, record, model = _process(ray, finished[0], names, process, nodes)
            done[process] = rows, record, model
            for row in rows:
                on_run(row)
        if gpu and names:
            found = []
            for i in range(timing.device_processes):  # in turn: never two on one GPU
                profile = device_processes.task(names, problem, timing.seed, i)
                ref = task.remote(profile, len(names) * per_kernel, switches)
                try:
                    outcome, _, node = ray.get(ref)
                except ray.exceptions.RayError as error:
                    outcome = ray_cluster.lost_outcomes(1, error)[0]
                found.append(device_processes.profiles_from(outcome, names))
            profiles = device_processes.merged(found, names)
    except KeyboardInterrupt:
        partial = True  # keep what finished; the report says it is partial
        for ref in pending:
            ray.cancel(ref, force=True)
    ran_on = sorted({model for _, _, model in done.values() if model})
    device_name = " and ".join(ran_on) or (models[0] if models else info.device_name)
    asked = _asked(problem, timing, info, device_name)
    finished_rows = [row for i in sorted(done) for row in done[i][0]]
    records = [done[i][1] for i in sorted(done)]
    report = compare_parts.build_report(
        asked, kernels, [*runs, *finished_rows], records, colds, profiles, partial
    )
    return unpaired(report, ran_on, progress), list(nodes.values())


def unpaired(report: CompareReport, ran_on: Sequence[str], progress: Progress) -> CompareReport:
    """``report`` without a claim when its processes came back from GPUs of
    several models (Ray named no model before, or not the ones its tasks
    found): the figures are kept, each verdict says why there is none."""
    if len(set(ran_on)) < 2:
        return report
    models = " and ".join(sorted(set(ran_on)))
    why = f"its processes ran on GPUs of several models ({models}): no verdict pairs them"
    progress(f"warning: {why}")
    verdicts = tuple(
        attrs.evolve(v, verdict="no verdict", explanation=why) for v in report.verdicts
    )
    return attrs.evolve(report, verdicts=verdicts)


def _process(
    ray: ModuleType,
    ref: ObjectRef[InSession],
    names: list[str],
    process: int,
    nodes: dict[str, NodeRecord],
) -> tuple[list[ProcessRun], ProcessRecord, str]:
    """One finished process's rows and record (with its host and GPU), and
    the GPU model it ran on ('' when its Ray task was lost)."""
    node: NodeRecord | None
    try:
        outcome, rerun, node = ray.get(ref)
    except ray.exceptions.RayError as error:  # lost after its retries
        outcome, rerun, node = ray_cluster.lost_outcomes(1, error)[0], "", None
    if node is not None:
        nodes[str(node.get("host"))] = node
    rows, record = compare_parts.from_outcome(names, process, outcome)
    record = attrs.evolve(
        record,
        reason=rerun or record.reason,
        device_index=None if node is None else node.get("device_index"),
        host="" if node is None else str(node.get("host", "")),
    )
    return rows, record, "" if node is None else str(node.get("device_name", ""))


def _asked(
    problem: Problem, timing: TimingOptions, info: BackendInfo, device_name: str
) -> compare_parts.Asked:
    return compare_parts.Asked(
        problem=problem,
        processes=timing.processes,
        seed=timing.seed,
        clock=clock_description(info, device_name, timing.l2),
        device_name=device_name,
        gpu=info.is_gpu,
        repeats=timing.repeats,
        warmup=timing.warmup,
        max_time_s=timing.max_time_s,
        margin=timing.margin,
        confidence=stats.CONFIDENCE,
        l2=timing.l2,
    )
