"""``gemmreg bench --devices``: a sweep spread over several GPUs of this host.

The unit of work is a point. Each GPU gets a pool of timing workers pinned
to it (:func:`gemmreg.workers.devices.pin_device_env`) and one thread that
takes the next point not yet taken and times it on that pool, all of its
processes there: a point's processes stay comparable, and a timing worker
owns its GPU for the whole point (only one point runs on a GPU at a time).

Devices are grouped by model, and every model group times every point:
figures are compared only within one model, so a host with two models gives
two full sweeps, one per model, each sharded over that model's GPUs. The
reports come back in one run, ordered by group and then by point as asked,
each naming its device; the run is saved again after every point (partial
until the last), so an interruption keeps every point that finished, and
says it was interrupted (``manifest["stopped"]``, as on one GPU); what the
device threads raise once their workers were killed under them is the
interruption seen from inside, dropped, not an error of the sweep. A save
the storage refuses stops the sweep as on one GPU: no point starts after
it, the points in flight finish and print their figures (they are measured,
not saved), and the sweep returns them all with the refusal
(:mod:`gemmreg.fanout.sweep_saves`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import attrs
from gemmreg.contract.batching import shown_shape
from gemmreg.fanout import ahead_pinned
from gemmreg.fanout.jobs import SweepJob
from gemmreg.fanout.sweep_saves import Saves
from gemmreg.fanout.sweeping import INTERRUPTED_NOTE, Sweep, flag_shared, time_point
from gemmreg.instruments import environment
from gemmreg.reporting import render_points
from gemmreg.timing import worker_pool
from gemmreg.timing.timing_records import CompareReport
from gemmreg.workers import devices

LEFTOVER_WAIT_S = 5.0
"""After an interruption, how long each device thread may take to notice
that its workers were killed before the partial run is saved without it."""

Slot = tuple[str, int]
"""A unit of work: (device model, point index)."""


def sweep_on_devices(job: SweepJob, chosen: Sequence[devices.Device]) -> Sweep:
    """Every problem of ``job`` on every device model of ``chosen``, sharded
    over each model's GPUs; the job's ``meter``, ``weights`` and ``fields``
    as with :func:`gemmreg.fanout.sweeping.sweep` (the meter counts a point
    once per model: it is timed once per model). Its ``ahead``: a
    :class:`~gemmreg.fanout.ahead_pinned.PoolsAhead`, a pool per GPU of
    ``chosen``, pinned and started before the plugins were read, used in
    place of new ones."""
    kernels, problems, timing, info = job.kernels, job.problems, job.timing, job.info
    out, progress, meter, weights = job.out, job.progress, job.meter, job.weights
    ahead: ahead_pinned.PoolsAhead | None = job.ahead
    grouped = devices.groups(chosen)
    order: list[Slot] = [(model, i) for model in grouped for i in range(len(problems))]
    pending: dict[str, list[int]] = {model: list(range(len(problems))) for model in grouped}
    if ahead is not None:
        pools = ahead.take(timing.processes, info.is_gpu)
    else:
        pools = {
            d.index: worker_pool.Pool(
                size=timing.processes,
                env=devices.pin_device_env(os.environ, d),
                gpu=info.is_gpu,
            )
            for d in chosen
        }
        for pool in pools.values():  # every GPU's workers start at once
            pool.start()
    lock = threading.Lock()
    printing = threading.Lock()  # the device threads share one stderr (and its bar)

    def say(line: str) -> None:
        with printing:
            progress(line)

    stop = threading.Event()
    interrupted = threading.Event()
    """Set before the workers are killed: what a device thread raises after
    it is that kill seen from inside (a closed pipe, a dead session), not an
    error of its own, and must not turn Ctrl-C or SIGTERM into exit 3."""
    done: dict[Slot, CompareReport] = {}
    errors: list[BaseException] = []
    names = ", ".join(kernel.name for kernel in kernels)
    manifest: dict[str, object] = {}
    saves = Saves(out, manifest)

    def finished() -> list[CompareReport]:
        return [done[slot] for slot in order if slot in done]

    def work(device: devices.Device) -> None:
        try:
            while not stop.is_set():
                with lock:
                    queue = pending[device.name]
                    if not queue:
                        return
                    index = queue.pop(0)
                problem = problems[index]
                label = f"[{index + 1}/{len(problems)} {device.label}] {shown_shape(problem)} {problem.number_format}: "
                say(f"{label}timing {names} on {device.name}")
                report = time_point(
                    kernels,
                    problem,
                    timing,
                    info,
                    say,
                    label,
                    pools[device.index],
                    device=device,
                )
                with lock:
                    if stop.is_set() and saves.refused is None:
                        return  # killed under it: not a result
                    if weights is not None:
                        report = attrs.evolve(report, weight=weights[index])
                    done[(device.name, index)] = flag_shared(report, manifest, say)
                    for line in render_points.point_lines(report, label):
                        say(line)  # before the save: a full disk loses no figure
                    if meter is not None and not report.partial:
                        with printing:
                            meter.advance(float(problem.flops))
                    # A refused save stops the sweep; the points in flight still print.
                    if not saves.save(finished(), len(done) < len(order)) or report.partial:
                        stop.set()
        except BaseException as error:  # re-raised in the main thread
            if not interrupted.is_set():
                errors.append(error)
            stop.set()

    threads = [
        threading.Thread(target=work, args=(d,), name=f"gemmreg-{d.label}", daemon=True)
        for d in chosen
    ]
    partial = False
    try:
        manifest.update(
            environment.manifest(
                kernels, seed=timing.seed, devices=devices.described(chosen), **job.fields
            )
        )
        devices.run_threads(threads)
    except KeyboardInterrupt:
        partial = True
        interrupted.set()
        with lock:
            stop.set()
            manifest["stopped"] = INTERRUPTED_NOTE
        for pool in pools.values():
            for session in pool.everyone():
                session.kill()
        for thread in threads:
            thread.join(LEFTOVER_WAIT_S)
    finally:
        if meter is not None:
            meter.close()
        for pool in pools.values():
            pool.close()
    if errors:
        raise errors[0]
    partial = partial or len(done) < len(order)
    manifest["gpu_state_after"] = environment.gpu_state() if info.is_gpu else {}
    reports = finished()
    if reports:
        saves.save(reports, partial)
    saves.note()
    partial = partial or (saves.refused is not None and saves.kept_partial)
    return Sweep(
        reports=tuple(reports), partial=partial, not_saved=saves.refused, manifest=manifest
    )
