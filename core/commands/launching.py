"""What a command adds to its request on the way to the work: where the
workers run beyond one local pool (spread over GPUs, on a Ray cluster), how
progress is shown, how a refusal names an option (:class:`Launch`); the
executor the work is handed to, chosen once (:func:`executor_for`); and the
steps every timing command takes before it times anything: its workers
started ahead of the plugins' import (killed again if the command then
fails), the GPUs ``--devices`` names resolved, the run's estimated time.

The command line fills a :class:`Launch` from its options
(:mod:`gemmreg.commands.cli_timing`); the Python API (:mod:`gemmreg.api`)
runs with the defaults: one local pool, its lines to the caller's function.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
from gemmreg.commands.request_values import Spell, keyword_spelling
from gemmreg.commands.requests import TimingAsked
from gemmreg.contract.backend import BackendInfo
from gemmreg.workers.devices import Device
from gemmreg.workers.tracing import trace

if TYPE_CHECKING:
    from gemmreg.commands.requests import BenchRequest, CheckRequest, CompareRequest
    from gemmreg.commands.results import BenchResult, CheckResult, CompareResult
    from gemmreg.contract.records import Problem
    from gemmreg.discovery.registry import RegisteredKernel
    from gemmreg.fanout.ahead_pinned import PoolsAhead
    from gemmreg.fanout.executors import Executor
    from gemmreg.timing.timing_options import TimingOptions
    from gemmreg.timing.timing_records import CompareReport
    from gemmreg.timing.worker_pool import Ahead

Progress = Callable[[str], None]
"""Where a command's progress lines go (stderr on the command line)."""


def silent(text: str) -> None:
    """Progress nobody asked to see."""


@attrs.frozen(kw_only=True)
class Launch:
    """How a request is run, beside what it asks."""

    spell: Spell = keyword_spelling
    """How a refusal names an option: ``--max-time`` or ``max_time``."""
    devices: str | None = None
    """``--devices`` where it spreads the work over several GPUs."""
    ray: str | None = None
    """The Ray cluster the work runs on (checked already: ``ray_cluster.address``)."""
    meter: bool = False
    """Count the work on stderr: a redrawn bar on a terminal, status lines in a log."""
    on_backend: Callable[[BackendInfo], None] | None = None
    """Checks once the backend is known, before the plugins are read (a GPU
    that ``--device`` pinned is still one, a profiler runs on it)."""
    on_start: Callable[[], None] | None = None
    """``bench``: called once every refusal has passed and the run's folder
    is held, before the first point (the command line says there what a
    resumed sweep times: a refusal stays one line)."""
    keep_cache: Path | None = None
    """``compare``: where the timed processes' caches are kept (a profiler run after)."""
    after: Callable[[Sequence[CompareReport], dict[str, object], Sequence[Device]], None] | None = (
        None
    )
    """``compare``: called with the reports (one per dtype), their manifest
    and the GPUs spread over, once the timing is done (the command line's
    profilers)."""
    verbose: bool = False
    """``check``: a progress line for every case, passing ones too."""
    executor: Executor | None = None
    """Where the work runs, in place of the one ``devices`` and ``ray``
    choose (:mod:`gemmreg.fanout.executors`); it starts its own workers."""


LOCAL = Launch()
"""The Python API's: one local pool, no meter, options named as keywords."""


_Result = TypeVar("_Result", "CompareResult", "BenchResult", "CheckResult")


def answered(
    work: Callable[..., _Result],
    save: Callable[..., None] | None,
    request: CompareRequest | BenchRequest | CheckRequest,
    progress: Progress | None,
) -> _Result:
    """The Python API's run of ``request``: ``work`` (a command's function)
    under :data:`LOCAL`, its result saved where it asks (``save``), its
    folder's path whole; the folder it claimed let go of when the call ends
    (the process goes on: a notebook)."""
    from gemmreg.reporting import run_folder

    said = progress or silent
    with run_folder.released():
        result = work(request, said, LOCAL)
        if save is not None:
            save(result, said)
    if result.out is None:
        return result
    return attrs.evolve(result, out=result.out.absolute())  # the caller may change folder


def executor_for(launch: Launch, info: BackendInfo) -> Executor:
    """Where the command's work runs, chosen once the backend is known: the
    launch's own executor, else the one ``--ray`` or ``--devices`` chooses
    (one pool here without either)."""
    from gemmreg.fanout import executors

    if launch.executor is not None:
        return launch.executor
    return executors.built_in(launch.ray, spread_over(launch.devices, info))


def start_ahead(names: Sequence[str], timing: TimingAsked, cold: bool, launch: Launch) -> Any:
    """The command's workers, started before this process imports torch and
    reads the plugins (:class:`gemmreg.timing.worker_pool.Ahead`), or None
    where that does not pay (no GPU likely), is switched off, or the work
    runs elsewhere (on Ray, or an executor of the launch's own); with
    ``--devices``, pinned to the GPUs it will name, where they can be known
    yet (:mod:`gemmreg.fanout.ahead_pinned`).

    Left untyped: an ``Ahead``, or for ``bench --devices`` a ``PoolsAhead`` (a
    pool per GPU); which one follows from ``cold`` and ``--devices``, and the
    command hands it to its executor, which gives it the runner made for it."""
    from gemmreg.contract import backend
    from gemmreg.fanout import ahead_pinned
    from gemmreg.timing import timing_options, worker_pool

    if launch.ray is not None or launch.executor is not None or not worker_pool.starting_ahead():
        return None
    several = launch.devices
    gpu = backend.gpu_likely()
    spend = timing_options.budget(gpu, timing.processes, timing.budget, fixed=False)
    processes = timing_options.first_processes(gpu, timing.processes, spend)
    if several is not None:  # pinned to the GPUs --devices will name, where known yet
        return ahead_pinned.start_ahead(several, names, processes, gpu, cold)
    trace("starting workers ahead")
    device_processes = timing.device_processes or timing_options.DEFAULT_DEVICE_PROCESSES
    return worker_pool.start_ahead(
        names if cold else [], processes, gpu, cold=cold, profilers=device_processes
    )


@contextlib.contextmanager
def killed_on_error(ahead: Ahead | PoolsAhead | None) -> Iterator[None]:
    """The workers started ahead are killed if the command fails before it
    hands them their work (bad input found once the plugins are read)."""
    try:
        yield
    except BaseException:
        if ahead is not None:
            ahead.abandon()
        raise


def spread_over(value: str | None, info: BackendInfo) -> list[Device] | None:
    """The GPUs ``--devices`` spreads the work over (:mod:`gemmreg.workers.devices`),
    checked against this host's; None without the option, or where one index
    pinned the whole run (:func:`gemmreg.commands.cli_device.several`)."""
    if value is None:
        return None
    from gemmreg.workers import devices
    from gemmreg.workers.device_choice import parse_devices

    choice = parse_devices(value)
    return devices.resolve(choice, devices.available_devices(info.is_gpu, info.device_name))


def interpreted(kernels: Sequence[RegisteredKernel]) -> list[bool]:
    """Per runnable kernel: does it run under Triton's interpreter here."""
    from gemmreg.contract.known_limits import triton_interpreted

    return [triton_interpreted(k.spec.capabilities.triton) for k in kernels if not k.unavailable]


def point_estimates(
    kernels: Sequence[RegisteredKernel],
    problems: Sequence[Problem],
    timing: TimingOptions,
    gpu: bool,
) -> list[float]:
    """Each point's estimated seconds (:func:`gemmreg.timing.run_estimate.point_s`):
    the work a sweep's progress counts its points in, so that its ETA is the
    cost model calibrated by the points done. A point's 2MNK alone is the
    wrong work: at small shapes a point's time is mostly its fixed costs
    (soaks, checks, the sampling cap), and a 32^3 point's seconds scaled by
    2MNK put a one-minute sweep at 22 minutes."""
    from gemmreg.timing import run_estimate, timing_options

    policy = timing_options.policy_for(gpu, timing.repeats, timing.warmup, timing.max_time_s)
    slow = interpreted(kernels)
    return [run_estimate.point_s(p, slow, timing.processes, policy) for p in problems]


def warn_if_long(
    command: str,
    kernels: Sequence[RegisteredKernel],
    problems: Sequence[Problem],
    timing: TimingOptions,
    gpu: bool,
    progress: Progress,
) -> float:
    """The run's estimated seconds, with a warning line first when it is long."""
    from gemmreg.timing import run_estimate, timing_options

    policy = timing_options.policy_for(gpu, timing.repeats, timing.warmup, timing.max_time_s)
    slow = interpreted(kernels)
    estimate = run_estimate.run_s(problems, slow, timing.processes, policy)
    warning = run_estimate.long_run_warning(
        estimate, len(problems), timing.processes, sum(slow), command
    )
    if warning:
        progress(warning)
    return estimate


def warn_if_profiled(info: BackendInfo, ray: bool, progress: Progress) -> None:
    """Say as a GPU run starts that its timed processes will record through
    torch's profiler (:func:`gemmreg.timing.work_recording.profiler_fallback_line`).
    Not on Ray: the workers there run in the cluster's environment, not this one."""
    from gemmreg.timing import work_recording

    line = "" if ray else work_recording.profiler_fallback_line(info.kind)
    if line:
        progress(line)
