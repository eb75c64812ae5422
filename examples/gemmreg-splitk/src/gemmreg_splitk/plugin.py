"""The gemmreg plugin: two kernels, deterministic split-K and atomic split-K.

Each call is one launch of :mod:`gemmreg_splitk.kernel` and nothing else:
the tiles, the split, the grid and the kernel's constants are fixed once per
problem in ``prepare``; the launch only looks up the stream's cached buffers
(:mod:`gemmreg_splitk.workspace`) and reads the operands' strides.

Written against gemmreg's public API only (the names ``gemmreg`` exports),
and registered through the ``gemmreg`` entry-point group. Where the kernels
run (the device, its multiprocessors, whether Triton is interpreted) comes
from ``gemmreg.where()``; Triton's known limits (bf16 under the interpreter)
from ``Capabilities(triton=True)``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import gemmreg

from gemmreg_splitk import heuristics, kernel, tma, tuned, workspace

if TYPE_CHECKING:
    import torch

PRECISION = {
    "fp32": gemmreg.Precision(
        math="ieee_fp32", detail="tl.dot input_precision='ieee', fp32 partials"
    ),
    "fp16": gemmreg.Precision(math="fp16", detail="tl.dot, fp32 partials"),
    "bf16": gemmreg.Precision(math="bf16", detail="tl.dot, fp32 partials"),
}

SUM_ORDER = (
    "split-K changes the order of the sum (per-slice partials, then their sum), "
    "but every partial is fp32, so the fp32 accumulation bound holds"
)
TOLERANCES = {
    "fp32": gemmreg.Tolerance(rtol=3e-5, atol=1e-6, why=SUM_ORDER),
    "fp16": gemmreg.Tolerance(
        rtol=2e-3, atol=1e-3, why=SUM_ORDER + "; plus one fp16 rounding of C"
    ),
    "bf16": gemmreg.Tolerance(
        rtol=1e-2, atol=1e-2, why=SUM_ORDER + "; plus one bf16 rounding of C"
    ),
}


CAPABILITIES = gemmreg.Capabilities(
    dtypes={"fp32", "fp16", "bf16"},
    backends={"cuda", "rocm", "cpu"},
    precision=PRECISION,
    layouts={"rowmajor", "transposedA", "transposedB", "padded"},
    triton=True,
)


def target(where: gemmreg.Environment) -> heuristics.Target:
    """What the split is chosen for: the GPU's multiprocessors, or the interpreter."""
    if where.triton_interpreted:
        return heuristics.INTERPRETER
    return heuristics.gpu(where.multiprocessors or heuristics.UNKNOWN_PROCESSORS)


def _stream_handle(where: gemmreg.Environment) -> Callable[[], int]:
    """The current stream's handle, read per call (the buffers are per stream):
    Triton's own lookup, which its launcher makes anyway; 0 under the interpreter."""
    if where.triton_interpreted:
        return lambda: 0
    import functools

    import torch
    from triton.runtime import driver

    return functools.partial(driver.active.get_current_stream, torch.cuda.current_device())


def make_prepare(atomic: bool, *, reverse_splits: bool = False) -> Callable[..., gemmreg.Launch]:
    """``reverse_splits`` (tests only) runs the K slices last to first under
    the interpreter, so another program reduces each tile."""

    def prepare(problem: gemmreg.Problem) -> gemmreg.Launch:
        CAPABILITIES.require(problem)
        where = gemmreg.where()
        m, n, k = problem.mnk
        element_bytes = gemmreg.torch_dtype(problem.dtype).itemsize
        config = heuristics.choose(
            m, n, k, target(where), atomic=atomic, element_bytes=element_bytes
        )
        return build_launch(m, n, k, config, atomic, where, reverse_splits=reverse_splits)

    return prepare


def build_launch(
    m: int, n: int, k: int, config: heuristics.Config, atomic: bool,
    where: gemmreg.Environment, *, reverse_splits: bool = False,
) -> gemmreg.Launch:  # fmt: skip
    """One launch for ``config`` as given: what ``prepare`` runs, and what
    ``scripts/tune.py`` sweeps its candidates through. Atomic mode with
    ``config.fixed_order`` is deterministic mode's launch."""
    atomic = atomic and not config.fixed_order
    splitk = kernel.splitk_kernel()
    split, tiles, k_per_split = config.split_k, config.tiles(m, n), config.k_per_split
    tree = config.reduce == "tree" and not atomic and split > 1
    scatter = config.reduce == "scatter" and not atomic and split > 1
    spin = scatter and _all_resident(tiles * split, where)
    swap = config.swap_ab
    grid = (tiles * split,)
    # swap_ab: the kernel computes C^T = B^T A^T, an N x M problem whose M
    # tile is the config's BLOCK_N (Hopper's wgmma wants 64 rows or more)
    tile_m, tile_n = (config.block_n, config.block_m) if swap else (config.block_m, config.block_n)
    constants = {
        "BLOCK_M": tile_m,
        "BLOCK_N": tile_n,
        "BLOCK_K": config.block_k,
        "SPLIT_K": split,
        "ATOMIC": atomic,
        "EVEN_K": k > 0 and k % k_per_split == 0,
        "REDUCE_CHUNK": config.reduce_chunk,
        "REVERSE_SPLITS": reverse_splits,
        "PRECISION": kernel.INPUT_PRECISION,
        "TREE": tree,
        "LEVELS": tuned.tree_levels(split, config.fanin) if tree else 0,
        "FANIN": config.fanin if tree else 2,  # one binary for serial whatever the field says
        "SCATTER": scatter,
        "SPIN": spin,
        "num_warps": config.num_warps,
        "num_stages": config.num_stages,
    }
    if scatter:
        from gemmreg_splitk import scatter as shares  # imports Triton: decided by now

        constants["SLOTS"] = shares.slots(split)
        constants["PER"] = shares.share_size(tile_m, tile_n, split)
    km, kn = (n, m) if swap else (m, n)
    device, stream = where.device, _stream_handle(where)
    if spin:  # every program at once, or the driver refuses the launch (never a hang)
        constants["launch_cooperative_grid"] = True
    counters = tiles * split if tree else tiles  # the tree counts per node, not per tile
    kind = "atomic" if atomic else "scatter" if scatter else "slots"
    if split > 1:
        workspace.buffers(device, stream(), km, kn, split, counters, kind)  # made here, not timed

    def buffers() -> tuple[torch.Tensor, torch.Tensor] | None:
        return (
            None
            if split == 1
            else workspace.buffers(device, stream(), km, kn, split, counters, kind)
        )

    if config.tma and tma.supported(where):
        pointer = build_launch(
            m, n, k, attrs.evolve(config, tma=False), atomic, where, reverse_splits=reverse_splits
        )
        return _tma_launch(
            splitk, grid, constants, (km, kn, k, k_per_split), swap, buffers, pointer
        )

    if swap:

        def launch_swapped(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
            partials, count = buffers() or (c, c)
            (sbk, sbn), (sam, sak), (scm, scn) = b.stride(), a.stride(), c.stride()
            splitk[grid](
                b, a, c, partials, count, n, m, k, k_per_split,
                sbn, sbk, sak, sam, scn, scm, **constants,
            )  # fmt: skip

        return launch_swapped

    if split == 1:  # nothing to reduce: the programs write C themselves

        def launch(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
            splitk[grid](
                a, b, c, c, c, m, n, k, k_per_split,
                *a.stride(), *b.stride(), *c.stride(), **constants,
            )  # fmt: skip

        return launch

    def launch_split(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
        partials, count = workspace.buffers(device, stream(), m, n, split, counters, kind)
        splitk[grid](
            a, b, c, partials, count, m, n, k, k_per_split,
            *a.stride(), *b.stride(), *c.stride(), **constants,
        )  # fmt: skip

    return launch_split


def _all_resident(programs: int, where: gemmreg.Environment) -> bool:
    """Whether the reduce-scatter may spin: on a GPU, at most one program per
    multiprocessor (one always fits), so a cooperative launch runs them all at
    once. Elsewhere the last program sums every share
    (:mod:`gemmreg_splitk.scatter`)."""
    processors = where.multiprocessors
    return not where.triton_interpreted and processors is not None and programs <= processors


def _tma_launch(
    splitk: Any, grid: tuple[int], constants: dict[str, Any], sizes: tuple[int, int, int, int],
    swap: bool, buffers: Callable[[], Any], pointer: gemmreg.Launch,
) -> gemmreg.Launch:  # fmt: skip
    """The launch through TMA descriptors (:mod:`gemmreg_splitk.tma`), built per
    call from the operands; operands TMA cannot take go to ``pointer``, the same
    config on the pointer path. ``sizes``: the kernel's M, N, K and K slice
    (M and N swapped for C^T = B^T A^T)."""
    km, kn, k, k_per_split = sizes
    box_a, box_b = (
        (constants["BLOCK_M"], constants["BLOCK_K"]),
        (constants["BLOCK_K"], constants["BLOCK_N"]),
    )
    variants = {
        (a_t, b_t): {**constants, "TMA": True, "A_T": a_t, "B_T": b_t}
        for a_t in (False, True)
        for b_t in (False, True)
    }

    def launch(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
        (sam, sak), (sbk, sbn), (scm, scn) = a.stride(), b.stride(), c.stride()
        if swap:  # the kernel's A is B^T, its B is A^T, its C is C^T
            x, y, sx, sy, sc = b, a, (sbn, sbk), (sak, sam), (scn, scm)
        else:
            x, y, sx, sy, sc = a, b, (sam, sak), (sbk, sbn), (scm, scn)
        da = tma.describe(x, km, k, *sx, box_a)
        db = tma.describe(y, k, kn, *sy, box_b) if da is not None else None
        if da is None or db is None:
            pointer(a, b, c)
            return
        partials, count = buffers() or (c, c)
        splitk[grid](
            da[0], db[0], c, partials, count, km, kn, k, k_per_split,
            *sx, *sy, *sc, **variants[da[1], db[1]],
        )  # fmt: skip

    return launch


SOURCES = (
    __file__,
    *(str(Path(module.__file__ or "")) for module in (kernel, heuristics, tma, tuned, workspace)),
    *(str(Path(kernel.__file__ or "").with_name(name)) for name in ("tree.py", "scatter.py")),
)
"""Every file the kernels' behaviour depends on, hashed into a run's manifest."""


def _spec(name: str, atomic: bool, summary: str) -> gemmreg.KernelSpec:
    return gemmreg.KernelSpec(
        name=name,
        summary=summary,
        prepare=make_prepare(atomic),
        capabilities=CAPABILITIES,
        tolerances=TOLERANCES,
        sources=SOURCES,
    )


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        _spec(
            "splitk",
            False,
            "Triton split-K GEMM, one launch: fp32 partials, reduced in a fixed order",
        )
    )
    register(
        _spec(
            "splitk_atomic",
            True,
            "Triton split-K GEMM, one launch: fp32 partials summed by atomic adds (in a fixed "
            "order where the GPU measured that faster); no reproducibility promised",
        )
    )
