"""``gemmreg check --devices``: the correctness matrix spread over several GPUs.

The unit is a kernel's batch of cases, the same batch
:func:`gemmreg.checking.check_runner.run_check` gives one kernel: each GPU
has a thread that takes the next kernel not yet taken and runs its cases in
workers pinned to that GPU (:func:`gemmreg.workers.devices.pin_device_env`).
A kernel's cases stay together so the rules that span them (its first hang
skips the rest, so do several lost workers in a row) hold as on one GPU, and
the results are the same ones, merged back in the order the kernels were
named. A correctness answer does not depend on timing, so kernels go to any
GPU, whatever its model; each result names the GPU it ran on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence

import attrs
from gemmreg.checking import check_runner
from gemmreg.checking.check_runner import CaseResult
from gemmreg.checking.matrix import Case
from gemmreg.discovery.registry import RegisteredKernel
from gemmreg.workers import devices

KernelRunner = Callable[[RegisteredKernel, dict[str, str], Callable[[CaseResult], None]], None]
"""Runs one kernel's batch in workers started with the environment given (a
pinned GPU's), handing each result to the callback as it settles."""


def check_on_devices(
    kernels: Sequence[RegisteredKernel],
    cases: Sequence[Case],
    gpu: bool,
    chosen: Sequence[devices.Device],
    on_result: Callable[[CaseResult], None] | None = None,
    task_timeout: float | None = None,
) -> list[CaseResult]:
    """Every kernel on every case, kernels shared out among ``chosen``.
    ``on_result`` sees each result as it arrives (from any GPU, one at a
    time); the list returned is in the order of ``kernels``. On Ctrl-C the
    threads are left to die with the process (their workers die with it,
    :mod:`gemmreg.workers.lifeline`) and KeyboardInterrupt propagates."""

    def run(
        kernel: RegisteredKernel, env: dict[str, str], record: Callable[[CaseResult], None]
    ) -> None:
        check_runner.check_kernel(kernel, cases, gpu, record, task_timeout, env)

    return shard_kernels(kernels, chosen, run, on_result)


def shard_kernels(
    kernels: Sequence[RegisteredKernel],
    chosen: Sequence[devices.Device],
    run: KernelRunner,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """``run`` on each kernel, the kernels shared out among ``chosen``: a
    thread per GPU takes the next kernel and runs it pinned to its GPU. Each
    result that ran names its GPU; the list returned is in the order of
    ``kernels`` (the check's batches, and the sanitizer pass's,
    :mod:`gemmreg.checking.sanitizer_pass`)."""
    lock = threading.Lock()
    queue = list(range(len(kernels)))
    by_kernel: dict[int, list[CaseResult]] = {i: [] for i in range(len(kernels))}
    errors: list[BaseException] = []

    def work(device: devices.Device) -> None:
        env = devices.pin_device_env(os.environ, device)
        try:
            while True:
                with lock:
                    if not queue or errors:
                        return
                    position = queue.pop(0)

                def record(result: CaseResult, at: int = position) -> None:
                    if result.status != "skip" or result.reason.startswith("skipped:"):
                        result = attrs.evolve(
                            result, device_index=device.index, device_name=device.name
                        )
                    with lock:
                        by_kernel[at].append(result)
                        if on_result is not None:
                            on_result(result)

                run(kernels[position], env, record)
        except BaseException as error:  # re-raised in the main thread
            errors.append(error)

    threads = [
        threading.Thread(target=work, args=(d,), name=f"gemmreg-check-{d.label}", daemon=True)
        for d in chosen
    ]
    devices.run_threads(threads)
    if errors:
        raise errors[0]
    return [result for i in range(len(kernels)) for result in by_kernel[i]]
