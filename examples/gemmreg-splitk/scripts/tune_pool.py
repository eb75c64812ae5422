"""The pool that compiles ``tune.py``'s candidates ahead of timing them (on a
GPU only: under Triton's interpreter nothing is compiled)."""

from __future__ import annotations

from typing import Any

from gemmreg_splitk import heuristics, plugin


class Compiler:
    """Processes that run each candidate once, so that Triton's disk cache holds
    its binary before the timing process needs it (compiling is the slow part)."""

    def __init__(self, jobs: int, where: Any) -> None:
        import os

        self.pool = None
        if where.triton_interpreted or jobs == 0:
            return
        jobs = jobs if jobs > 0 else max(1, (os.cpu_count() or 4) - 2)
        import concurrent.futures
        import multiprocessing

        self.pool = concurrent.futures.ProcessPoolExecutor(
            jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init
        )

    def compile(self, tasks: list[tuple[tuple[int, int, int], str, bool, heuristics.Config]],
                until: float) -> int:  # fmt: skip
        """Compile all, waiting at most until ``until`` (time.monotonic); how many failed."""
        if self.pool is None or not tasks:
            return 0
        import concurrent.futures
        import time

        futures = [self.pool.submit(_compile_one, *task) for task in tasks]
        done, pending = concurrent.futures.wait(futures, timeout=max(0.0, until - time.monotonic()))
        for f in pending:
            f.cancel()
        return sum(1 for f in done if f.exception() is not None or not f.result())

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


def _worker_init() -> None:
    import gemmreg

    gemmreg.where()


def _compile_one(
    shape: tuple[int, int, int], dtype: str, atomic: bool, config: heuristics.Config
) -> bool:
    import gemmreg
    import torch

    m, n, k = shape
    where = gemmreg.where()
    tdtype = gemmreg.torch_dtype(dtype)  # type: ignore[arg-type]
    a = torch.zeros(m, k, dtype=tdtype, device=where.device)
    b = torch.zeros(k, n, dtype=tdtype, device=where.device)
    c = torch.empty(m, n, dtype=tdtype, device=where.device)
    try:
        plugin.build_launch(m, n, k, config, atomic, where)(a, b, c)
        if where.is_gpu:
            torch.cuda.synchronize()
    except Exception:  # the timing process reports it
        return False
    return True
