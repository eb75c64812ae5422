"""``check``'s work from its request to its result, for the command line and
the Python API alike (:class:`~gemmreg.commands.requests.CheckRequest` in,
:class:`~gemmreg.commands.results.CheckResult` out): the plugins read,
the folder claimed, the correctness matrix run on every kernel (on this
host, spread over GPUs, or on a Ray cluster: the executor :class:`Launch`
chooses, :mod:`gemmreg.fanout.executors`), then the
sanitizer pass where one was asked for. Ctrl-C keeps the cases that
finished, marked partial. The check is saved apart (:func:`save`), after the
caller has shown it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
from gemmreg.checking.check_runner import CaseResult
from gemmreg.commands.launching import LOCAL, Launch, Progress, executor_for, silent
from gemmreg.commands.requests import CheckRequest
from gemmreg.commands.results import CheckResult
from gemmreg.contract.records import BATCH_LAYOUTS

if TYPE_CHECKING:
    from gemmreg.checking.matrix import Case
    from gemmreg.discovery.registry import RegisteredKernel


def check(
    request: CheckRequest, progress: Progress = silent, launch: Launch = LOCAL
) -> CheckResult:
    """Run the request's cases; a line for every case that does not pass
    (every case with ``launch.verbose``). The result is not saved yet."""
    from gemmreg.checking import matrix, sanitizer_pass
    from gemmreg.contract import backend
    from gemmreg.discovery import registry
    from gemmreg.fanout.executors import CheckJob
    from gemmreg.instruments import environment
    from gemmreg.reporting import check_saving, run_folder
    from gemmreg.reporting.progress import Meter
    from gemmreg.workers import devices

    request.check(launch.spell)
    found = registry.discover()
    kernels = found.select(list(request.plugins))
    info = backend.current()
    gpu = info.is_gpu
    if launch.on_backend is not None:
        launch.on_backend(info)
    executor = executor_for(launch, info)
    if request.out is not None:  # the last check: --force removes the old run only now
        run_folder.claim(request.out, launch.spell("out"), request.force, launch.spell("force"))
    cases = _seeded(
        matrix.build(
            request.level,
            gpu,
            request.dtypes,
            request.layouts,
            request.out_dtypes,
            request.scalings,
            request.batches,
            request.batch_layouts or BATCH_LAYOUTS,
            request.grouped,
        ),
        request,
    )

    results: list[CaseResult] = []
    meter = None
    if launch.meter:
        works = _works(kernels, cases, gpu)  # each case's 2MNK: what a finished case is named by
        meter = Meter(case_weights(works, gpu), "cases", keys=works)

    def on_result(result: CaseResult) -> None:
        results.append(result)  # kept as they finish, so that Ctrl-C loses none
        if result.status == "skip":
            return
        line = f"  {result.id}: {result.status}"
        quiet = result.status == "pass" and not launch.verbose  # failures always get a line
        if meter is None:
            if not quiet:
                progress(line)
        elif meter.done_counting:  # the sanitizer pass, after the matrix
            if not quiet:
                meter.line(line)
        elif quiet:
            meter.tick(float(result.case.problem.flops))
        else:
            meter.advance(float(result.case.problem.flops), line)

    chosen = list(executor.gpus) or None
    on_devices = {} if chosen is None else {"devices": devices.described(chosen)}
    wanted = request.out is not None
    manifest = environment.manifest(kernels, level=request.level, **on_devices) if wanted else {}
    interrupted = False

    def saved(so_far: list[CaseResult], more: dict[str, object]) -> None:
        if request.out is not None:  # as each batch arrives: a lost driver keeps them
            check_saving.save_check(request.out, {**manifest, **more}, so_far, True)

    job = CheckJob(
        kernels=kernels,
        cases=cases,
        gpu=gpu,
        on_result=on_result,
        task_timeout=request.timeout,
        on_batch=saved,
    )
    try:
        done = executor.check(job)
        results[:] = done.results  # in the order of the kernels, wherever each ran
        manifest.update(done.manifest)
        if meter is not None:
            meter.done_counting = True
        if request.sanitize:
            sanitize_cases = _seeded(
                matrix.sanitize_cases(request.dtypes, request.layouts), request
            )
            sanitizer_pass.run_pass_here(
                kernels,
                sanitize_cases,
                request.sanitize,
                request.out,
                manifest,
                progress if meter is None else meter.line,
                on_result,
                chosen,
            )
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if meter is not None:
            meter.close()
    return CheckResult(
        cases=results,
        partial=interrupted,
        out=request.out,
        kernels=[k.name for k in kernels],
        unavailable={k.name: k.unavailable for k in kernels if k.unavailable},
        issues=found.issues,
        manifest=manifest,
        sanitized=bool(request.sanitize),
    )


def save(result: CheckResult, progress: Progress = silent) -> None:
    """The check, into the folder its request claimed (none: nothing to do)."""
    from gemmreg.reporting import check_saving

    if result.out is None:
        return
    check_saving.save_check(
        result.out, result.manifest, list(result.cases), result.partial, result.sanitized
    )
    progress(f"evidence written to {result.out}/")


def _seeded(cases: list[Case], request: CheckRequest) -> list[Case]:
    """Every case with the request's seed, where it gives one."""
    if request.seed is None:
        return cases
    return [attrs.evolve(case, seed=request.seed) for case in cases]


def case_weights(works: Sequence[float], gpu: bool) -> list[float]:
    """What each case weighs in the progress meter's ETA: its work (2MNK)
    under Triton's interpreter, where a case's time grows with it; the same
    for every case on a GPU, where a case's time is its compiles, a tuner's
    trials and the float64 reference, not its 2MNK. There the 2^31-offset
    case's 2.75e11 ran in seconds, while weighed by its work it alone had
    the ETA of a check that took under five minutes read more than an hour
    (``evidence/2026-12-06-h100-fp8-128-tokens-and-16-bit-checks``)."""
    return [1.0] * len(works) if gpu else list(works)


def _works(kernels: Sequence[RegisteredKernel], cases: Sequence[Case], gpu: bool) -> list[float]:
    """The work (2MNK) of every case that will run, each case's name in the progress meter."""
    from gemmreg.checking import check_runner

    return [
        float(case.problem.flops)
        for kernel in kernels
        for _, case in check_runner.plan(kernel, cases, gpu)[1]
    ]
