"""What ``compare`` and ``bench`` set up before any timing: the timing options
with the backend's defaults, the rule that ``--processes`` and ``--budget``
are one or the other, and the workers started ahead of the plugins' import
(killed again if the command fails before it hands them work)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from gemmreg.deciding.options import UsageError
from gemmreg.interface.cli_common import _timeout
from gemmreg.running.tracing import trace


def timing_setup(
    args: argparse.Namespace, gpu: bool, sweep: bool = False, fixed: bool = False
) -> Any:
    """The timing options (bounded by argparse) with the backend's defaults
    filled in; ``fixed``: a run that cannot add processes (``--ray``)."""
    from gemmreg.deciding import timing_options

    return timing_options.timing_options(
        gpu,
        sweep=sweep,
        processes=args.processes,
        repeats=args.repeats,
        warmup=args.warmup,
        seed=args.seed,
        max_time_s=args.max_time,
        margin_pct=args.margin,
        task_timeout=_timeout(args.timeout),
        l2=args.l2,
        device_processes=args.device_processes,
        budget_s=args.budget,
        fixed=fixed,
    )


def one_count(args: argparse.Namespace, ray: bool) -> None:
    """``--processes`` fixes the count, ``--budget`` lets it grow: one or the
    other; and ``compare --ray``'s processes are a fixed count (``bench --ray``
    adds them on each actor's pool, as ``--devices`` does)."""
    if args.budget is not None and args.processes is not None:
        raise UsageError(
            "--processes and --budget: one or the other (--processes fixes the count, "
            "--budget adds processes until every pair is decided)"
        )
    if args.budget is not None and ray:
        raise UsageError("--budget and --ray: compare on Ray times a fixed count (--processes)")


def start_ahead(args: argparse.Namespace, cold: bool, several: str | None = None) -> Any:
    """The command's workers, started before this process imports torch and
    reads the plugins (:class:`gemmreg.running.worker_pool.Ahead`), or None;
    with ``--devices`` (``several``), pinned to the GPUs it will name, where
    they can be known yet (:mod:`gemmreg.running.ahead_pinned`)."""
    from gemmreg.contract import backend
    from gemmreg.deciding import timing_options
    from gemmreg.running import ahead_pinned, worker_pool

    if not worker_pool.starting_ahead():
        return None
    gpu = backend.gpu_likely()
    spend = timing_options.budget(gpu, args.processes, args.budget, fixed=False)
    processes = timing_options.first_processes(gpu, args.processes, spend)
    if several is not None:  # pinned to the GPUs --devices will name, where known yet
        return ahead_pinned.start_ahead(several, args.names, processes, gpu, cold)
    trace("starting workers ahead")
    device_processes = args.device_processes or timing_options.DEFAULT_DEVICE_PROCESSES
    return worker_pool.start_ahead(
        args.names if cold else [], processes, gpu, cold=cold, profilers=device_processes
    )


@contextlib.contextmanager
def killed_on_error(ahead: Any) -> Iterator[None]:
    """The workers started ahead are killed if the command fails before it
    hands them their work (bad input found once the plugins are read)."""
    try:
        yield
    except BaseException:
        if ahead is not None:
            ahead.abandon()
        raise
