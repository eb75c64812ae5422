"""A cluster through Ray: the same batches of tasks the local runner runs,
each as a Ray task that holds one GPU.

``ray`` is optional (``pip install 'gemmreg[ray]'``); without it ``--ray``
says how to install it, in one line. A Ray task runs
:func:`gemmreg.workers.isolation.run_tasks` on its node, so the plugin code
still runs in gemmreg's own worker subprocess, pinned to the GPU Ray gave
the task (Ray sets its ``CUDA_VISIBLE_DEVICES``): a crashing kernel costs
its case, as on one host, never the Ray task. A Ray task whose worker or
node dies is retried elsewhere, up to :data:`MAX_RETRIES` times, and then
reported lost (:func:`lost_outcomes`). Plugins reach the nodes as installed
packages; the switches that choose what runs (``GEMMREG_*``, ``TRITON_*``,
...) travel with each task, and each node's environment comes back with
its results for the manifest.

On a machine without GPUs (tests), ``--ray local`` starts a local Ray with
one :data:`FAKE_GPU_RESOURCE` per pretend GPU of
:data:`gemmreg.workers.devices.FAKE_DEVICES_ENV`, and each task holds one of
those instead of a GPU.
"""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, TypedDict

from gemmreg.contract.options import UsageError
from gemmreg.instruments import environment
from gemmreg.workers import devices, isolation
from gemmreg.workers.tasks import Task, TaskOutcome

if TYPE_CHECKING:
    from ray import ObjectRef

RAY_ADDRESS_ENV = "GEMMREG_RAY_ADDRESS"
"""The Ray cluster to use when ``--ray`` is not given."""
LOCAL = "local"
"""``--ray local``: start a Ray instance on this machine for the run."""
INSTALL_HINT = "--ray needs Ray, an optional extra: pip install 'gemmreg[ray]'"
NO_SANITIZER = (
    "--sanitize and --ray: one or the other (a sanitizer writes its raw logs on the "
    "node that runs it, and gemmreg brings no files back from a Ray node): use --devices"
)
"""Why ``check --sanitize --ray`` is refused (``--devices`` pins the pass's workers,
:func:`gemmreg.checking.sanitizer_pass.run_pass`)."""
MAX_RETRIES = 2
"""Times a Ray task whose worker process or node died is started again
elsewhere before its cases are reported lost. A plugin's own crash is not
one of these: it kills gemmreg's worker subprocess, which the Ray task
survives and reports (the case is *crashed*, as on one host)."""
FAKE_GPU_RESOURCE = "gemmreg_fake_gpu"
"""The custom Ray resource a task holds instead of a GPU on a machine
without GPUs (pretend GPUs, :data:`gemmreg.workers.devices.FAKE_DEVICES_ENV`)."""


class NodeRecord(TypedDict):
    """Where a Ray task ran (:func:`node_record`), for the manifest and the rows."""

    host: str
    device_index: int | None
    """The GPU's index on its node (``CUDA_VISIBLE_DEVICES``), where it is one number."""
    device_name: str
    python: str
    executable: str
    gemmreg: str
    git: dict[str, str]


BatchResult = tuple[list[TaskOutcome], NodeRecord]
"""What a Ray task of :func:`run_batch` returns: the batch's outcomes and its node."""


def address(given: str | None) -> str | None:
    """``--ray``'s address, else :data:`RAY_ADDRESS_ENV`'s, else None (no
    Ray). An empty ``given`` is refused (an unset variable in a script
    must not fall back to the environment's cluster, or to none)."""
    if given is not None:
        if not given.strip():
            raise UsageError("--ray: is empty: name a Ray address ('local' starts one here)")
        return given
    return os.environ.get(RAY_ADDRESS_ENV) or None


def require() -> None:
    """Refuse ``--ray`` before any work where Ray is not installed."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise UsageError(INSTALL_HINT)


def connect(where: str) -> ModuleType:
    """The ``ray`` module, connected to ``where`` (:data:`LOCAL` starts one)."""
    try:
        import ray
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    if not ray.is_initialized():
        fake = devices.fake_devices()
        if where == LOCAL:
            resources = {FAKE_GPU_RESOURCE: float(len(fake))} if fake else None
            ray.init(resources=resources, include_dashboard=False, log_to_driver=False)
        else:
            try:
                ray.init(address=where, log_to_driver=False)
            except (ConnectionError, ValueError) as error:  # no cluster there, or no address
                first = str(error).strip().splitlines()[0] if str(error).strip() else ""
                raise UsageError(f"no Ray cluster to join at {where}: {first[:200]}") from None
    return ray


_holders = 0
"""Blocks holding the connection now (:func:`connected`, :func:`held`): the
last one out shuts it down."""


@contextlib.contextmanager
def connected(where: str) -> Iterator[ModuleType]:
    """The ``ray`` module connected to ``where`` for the block, shut down
    after it unless an outer block holds it (:func:`held`); Ray's own
    messages go to stderr, never into the command's output (``--format json``)."""
    with contextlib.redirect_stdout(sys.stderr), _holding(where) as ray:
        yield ray


@contextlib.contextmanager
def held(where: str) -> Iterator[None]:
    """One connection for the block, which every :func:`connected` inside
    reuses: a ``compare --ray`` of several dtypes connects (and with
    ``local`` starts a head) once, not once a dtype. Only connecting and
    shutting down are kept off stdout here; the block's own output is the
    caller's."""
    with contextlib.redirect_stdout(sys.stderr):
        holding = _holding(where)
        holding.__enter__()
    try:
        yield
    finally:
        with contextlib.redirect_stdout(sys.stderr):
            holding.__exit__(None, None, None)


@contextlib.contextmanager
def _holding(where: str) -> Iterator[ModuleType]:
    global _holders
    ray = connect(where)
    _holders += 1
    try:
        yield ray
    finally:
        _holders -= 1
        if not _holders:
            ray.shutdown()


def gpu_models(ray: ModuleType) -> list[str]:
    """The GPU models of the cluster's live nodes, as Ray names them (its
    ``accelerator_type:`` resources; the pretend GPUs' models under
    :data:`gemmreg.workers.devices.FAKE_DEVICES_ENV`); empty when Ray names
    none."""
    fake = devices.fake_devices()
    if fake is not None:
        return list(devices.groups(fake))
    prefix = "accelerator_type:"
    found = {
        key.removeprefix(prefix)
        for node in ray.nodes()
        if node.get("Alive")
        for key in node.get("Resources", {})
        if key.startswith(prefix)
    }
    return sorted(found)


def gpu_count(ray: ModuleType, gpu: bool) -> int:
    """The GPUs of the cluster a task or actor of gemmreg can hold (the
    pretend ones on a machine without GPUs: :func:`holds`; 0 when it has
    none); on the CPU alone, 1: points timed side by side would share its cores."""
    resources = ray.cluster_resources()
    if not gpu and devices.fake_devices() is not None:
        return int(resources.get(FAKE_GPU_RESOURCE, 0))
    return int(resources.get("GPU", 0)) if gpu else 1


def holds(gpu: bool) -> dict[str, object]:
    """What a Ray task of gemmreg holds: one GPU, or one pretend GPU (keywords
    of Ray's ``options``)."""
    held: dict[str, object] = {"num_gpus": 1 if gpu else 0}
    if not gpu and devices.fake_devices() is not None:
        held["resources"] = {FAKE_GPU_RESOURCE: 1}
    return held


def submit(
    ray: ModuleType, tasks: Sequence[Task], limits: Sequence[float], gpu: bool
) -> ObjectRef[BatchResult]:
    """Start ``tasks`` as one Ray task holding one GPU (or one pretend GPU):
    a reference to its (outcomes, node record)."""
    remote = ray.remote(run_batch).options(
        max_retries=MAX_RETRIES, retry_exceptions=False, **holds(gpu)
    )
    return remote.remote(list(tasks), list(limits), environment.switches())


def run_batch(tasks: list[Task], limits: list[float], switches: dict[str, str]) -> BatchResult:
    """On a node: the batch in gemmreg's own worker subprocesses (the rules
    of a kernel's batch, a hang or lost workers skipping the rest, as on one
    host), with the caller's switches; and this node's record."""
    from gemmreg.checking import check_runner

    env = {**os.environ, **switches}
    outcomes = isolation.run_tasks(
        tasks,
        task_timeout=limits,
        env=env,
        skip_after_timeout=True,
        skip_after_lost_workers=check_runner.LOST_WORKERS_IN_A_ROW,
    )
    return outcomes, node_record()


def node_record() -> NodeRecord:
    """Where a Ray task ran, for the manifest and the rows: host, GPU, versions."""
    from gemmreg.contract.version import __version__

    fake = devices.fake_devices()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    model = fake[0].name if fake else ""
    if not fake and visible:
        import torch

        model = torch.cuda.get_device_name(0) if torch.cuda.is_available() else ""
    index = int(visible) if visible.isdigit() else None
    return {
        "host": socket.gethostname(),
        "device_index": index,
        "device_name": model or platform.machine(),
        "python": platform.python_version(),
        "executable": sys.executable,
        "gemmreg": __version__,
        "git": environment.git_record(),
    }


def run_in_session(
    task: Task, limit: float, switches: dict[str, str]
) -> tuple[TaskOutcome, str, NodeRecord]:
    """On a node: one task in a fresh gemmreg worker subprocess on the Ray
    task's GPU, rerun once in another if its worker crashed (as on one
    host); the outcome, the note of that rerun ('' without one), and this
    node's record."""
    from gemmreg.workers.sessions import Session, run_retrying

    env = {**os.environ, **switches}
    session = Session(env)
    try:
        outcome, session, rerun = run_retrying(session, task, limit, lambda: Session(env))
    finally:
        session.close()
    return outcome, rerun, node_record()


def lost_outcomes(count: int, error: BaseException) -> list[TaskOutcome]:
    """The outcomes of a batch whose Ray task was lost after its retries."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    why = f"lost on the cluster: its Ray task died {MAX_RETRIES + 1} times ({first})"
    return [TaskOutcome(status="crashed", error=why) for _ in range(count)]
