"""``gemmreg check --ray ADDRESS``: the correctness matrix on a Ray cluster.

The unit is a kernel's batch of cases, as with ``--devices``
(:mod:`gemmreg.checking.check_shards`): each batch is one Ray task holding
one GPU (:mod:`gemmreg.fanout.ray_cluster`). The parent plans (skips are
decided here, never on a node), submits every batch at once, and takes the
results as they come back (``ray.wait``), each handed on at once, and
after each batch the results so far (``on_batch``: ``check --out`` saves
them then, so a driver that dies loses only the batches still in flight);
the list returned is merged in the order the kernels were named, as on one GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

import attrs
from gemmreg.checking import check_runner
from gemmreg.checking.check_runner import CaseResult
from gemmreg.checking.matrix import Case
from gemmreg.contract.task_kinds import CaseKind
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.fanout import ray_cluster
from gemmreg.fanout.ray_cluster import BatchResult, NodeRecord

if TYPE_CHECKING:
    from ray import ObjectRef

BatchDone = Callable[[list[CaseResult], list[NodeRecord]], None]
"""Told, after each batch, the results so far (in the order of the kernels)
and the records of the nodes so far."""


def check_on_ray(
    kernels: Sequence[RegisteredKernel],
    cases: Sequence[Case],
    gpu: bool,
    where: str,
    on_result: Callable[[CaseResult], None] | None = None,
    task_timeout: float | None = None,
    on_batch: BatchDone | None = None,
) -> tuple[list[CaseResult], list[NodeRecord]]:
    """Every kernel on every case on the cluster at ``where``: the results in
    the order of ``kernels``, and the record of every node that ran a batch.
    ``on_batch`` sees both, as they stand, after each batch has come back.
    Ray's own messages (a worker that died, say) go to stderr, never into
    the command's output (``--format json``)."""
    with ray_cluster.connected(where) as ray:
        return _run(ray, kernels, cases, gpu, on_result, task_timeout, on_batch)


def _run(
    ray: ModuleType,
    kernels: Sequence[RegisteredKernel],
    cases: Sequence[Case],
    gpu: bool,
    on_result: Callable[[CaseResult], None] | None,
    task_timeout: float | None,
    on_batch: BatchDone | None = None,
) -> tuple[list[CaseResult], list[NodeRecord]]:
    by_kernel: dict[int, list[CaseResult]] = {i: [] for i in range(len(kernels))}
    waiting: dict[ObjectRef[BatchResult], tuple[int, list[tuple[CaseKind, Case]]]] = {}

    def record(position: int, result: CaseResult) -> None:
        by_kernel[position].append(result)
        if on_result is not None:
            on_result(result)

    def merged() -> list[CaseResult]:
        return [r for i in range(len(kernels)) for r in by_kernel[i]]

    for position, kernel in enumerate(kernels):
        skipped, runnable = check_runner.plan(kernel, cases, gpu)
        for result in skipped:
            record(position, result)
        if runnable:
            tasks = [check_runner.task_for(kernel.name, kind, case) for kind, case in runnable]
            limits = check_runner.task_limits(runnable, gpu, task_timeout)
            waiting[ray_cluster.submit(ray, tasks, limits, gpu)] = (position, runnable)

    nodes: dict[str, NodeRecord] = {}
    pending = list(waiting)
    while pending:
        finished, pending = ray.wait(pending, num_returns=1)
        position, runnable = waiting[finished[0]]
        node: NodeRecord | None = None
        try:
            outcomes, node = ray.get(finished[0])
            nodes[str(node.get("host"))] = node
        except ray.exceptions.RayError as error:  # lost after its retries
            outcomes = ray_cluster.lost_outcomes(len(runnable), error)
        name = kernels[position].name
        for (kind, case), outcome in zip(runnable, outcomes, strict=True):
            cause = check_runner.cause_of(name, runnable, outcome)
            result = check_runner.result_from_outcome(name, kind, case, outcome, cause)
            if node is not None:
                result = attrs.evolve(
                    result, device_index=node["device_index"], device_name=node["device_name"]
                )
            record(position, result)
        if on_batch is not None:
            on_batch(merged(), list(nodes.values()))
    return merged(), list(nodes.values())
