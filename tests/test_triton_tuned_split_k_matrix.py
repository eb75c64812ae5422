"""gemmreg's correctness matrix for triton_tuned's split-K path, swapped and
not, and for its GEMV path, run in gemmreg's worker processes (a kernel
that reads or writes out of bounds crashes Triton's interpreter; there it
fails its case, not the run).

On the CPU ``prepare`` of triton_tuned itself runs the fixed tiled config,
so these specs fix a split-K config instead: 32-wide tiles (the
interpreter's cost grows with the programs), K cut in three. The GEMV spec
fits its columns to each problem's M (the matrix goes past the few rows the
dispatch gives it: the kernel computes any M), in fp16 only.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import gemmreg
from gemmreg.testing import matrix
from gemmreg_plugins import triton_tuned
from gemmreg_plugins.triton_tuned import launchers
from gemmreg_plugins.triton_tuned.configs import Config

SPLIT = Config(
    path="split_k", block_m=32, block_n=32, block_k=32, num_stages=1, num_warps=4, split_k=3
)
SWAPPED = Config(
    path="split_k",
    block_m=32,
    block_n=16,
    block_k=32,
    num_stages=1,
    num_warps=4,
    split_k=3,
    swap_ab=True,
)


GEMV = Config(path="gemv", block_m=32, block_n=1, block_k=32, num_stages=1, num_warps=4, split_k=3)


def _prepare_with(config: Config) -> Callable[[gemmreg.Problem], gemmreg.Launch]:
    def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
        where = gemmreg.where()
        triton_tuned.capabilities_for(where.triton_target).require(problem)
        precision = triton_tuned.INPUT_PRECISION[where.backend]
        fitted = config
        if config.path == "gemv":  # as many columns as A has rows
            fitted = attrs.evolve(config, block_n=1 << max(0, problem.m - 1).bit_length())
        return launchers.launcher(
            fitted, problem.m, problem.n, problem.k, precision, where.multiprocessors or 1
        )

    return prepare


def _spec(name: str, config: Config) -> gemmreg.KernelSpec:
    kind = gemmreg.where().triton_target
    return gemmreg.KernelSpec(
        name=name,
        summary=f"triton_tuned's {config.name}, fixed",
        prepare=_prepare_with(config),
        capabilities=triton_tuned.capabilities_for(kind),
        tolerances=triton_tuned.tolerances_for(kind),
        sources=triton_tuned.SOURCES,
    )


SPLIT_SPEC = _spec("triton_tuned_split_k", SPLIT)
SWAPPED_SPEC = _spec("triton_tuned_swap_ab", SWAPPED)
GEMV_SPEC = _spec("triton_tuned_gemv", GEMV)

test_split_k_matrix = matrix(SPLIT_SPEC, SWAPPED_SPEC, dtypes=["fp16", "fp32"])
test_gemv_matrix = matrix(GEMV_SPEC, dtypes=["fp16"])
