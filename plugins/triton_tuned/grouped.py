"""triton_tuned's grouped path: an MoE layer's experts (a grouped problem:
members of ``problem.groups[i]`` rows sharing n and k) in one launch,
where a loop of ``torch.mm`` launches one GEMM per expert and leaves SMs
idle on every small one. Two forms walk the same tile table: the pointer
kernel of :mod:`.grouped_kernel` (everywhere) and, on Hopper for 16-bit
operands TMA can take, the TMA kernel of :mod:`.grouped_tma_kernel`
(:mod:`.grouped_tma` says which operands).

Everything shape-dependent is settled in ``prepare`` (the cold start): the
tile table, built from ``problem.groups`` on the host and moved to the
device once, the config and the form. The launch reads neither the offsets
tensor (reading it on the host would synchronise inside a timed call; the
core makes it from the same sizes) nor anything it saw before: every call
computes every tile.

The config is a rule (:func:`.grouped_configs.config_for`), not a tuning (the grouped path
has no tuner yet); where the H200 has measured the dense paths' tiles, the
rule takes the grouped twin of the winner. The persistent grid is one
program per SM at most (:func:`.launchers.persistent_programs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import gemmreg
from gemmreg_plugins.triton_tuned import grouped_tma, paths_here, tuning_cache
from gemmreg_plugins.triton_tuned.grouped_configs import INTERPRETED, GroupedConfig, config_for
from gemmreg_plugins.triton_tuned.grouped_kernel import TABLE_FIELDS, grouped_kernel
from gemmreg_plugins.triton_tuned.launchers import persistent_programs

if TYPE_CHECKING:
    import torch

    Tables = dict[int, tuple[torch.Tensor, int]]  # tile tables on the device, entries: by block_m

INTERPRETER_PROGRAMS = 3
"""Programs under the interpreter: fewer than the tiles of every grouped
case, so the persistent loop takes several tiles per program there too."""


def tile_table(groups: Sequence[int], block_m: int) -> list[int]:
    """The kernel's tile table, flat: for every ``block_m`` rows of every
    non-empty member, (member, first row, row past the last of the member)."""
    table: list[int] = []
    start = 0
    for member, size in enumerate(groups):
        for first in range(start, start + size, block_m):
            table += [member, first, start + size]
        start += size
    return table


def tma_here(problem: gemmreg.Problem, where: gemmreg.Environment) -> bool:
    """Whether the TMA form can run ``problem`` here: Hopper or later with a
    Triton that makes descriptors on the device, 16-bit operands (fp32 keeps
    the pointer kernel: its TF32 tiles need the dense path's operand swap),
    and a layout whose strides TMA takes."""
    return (
        not where.triton_interpreted
        and paths_here.tma_supported(where)
        and problem.dtype in ("fp16", "bf16")
        and grouped_tma.takes(problem)
    )


def gluon_here(problem: gemmreg.Problem, where: gemmreg.Environment) -> bool:
    """Whether the Gluon form (:mod:`.gluon_grouped`) is offered for
    ``problem``: where the TMA form runs, on Hopper with the Gluon
    :mod:`.gluon_ws` is written in, and (until a GPU has measured it) under
    ``GEMMREG_TRITON_TUNED_UNMEASURED=1``."""
    return (
        tuning_cache.unmeasured_offered()
        and tma_here(problem, where)
        and paths_here.gluon_supported(where)
    )


def grouped_launcher(
    problem: gemmreg.Problem,
    where: gemmreg.Environment,
    input_precision: str,
    config: GroupedConfig | None = None,
) -> gemmreg.Launch:
    """``launch(a, b, out, offsets)`` for ``problem``, its table on the device;
    ``config``: instead of the rule's (a probe weighing others; a TMA one runs
    wherever Triton can run it, the interpreter included)."""
    groups, n, dtype = problem.groups, problem.n, problem.dtype
    if where.triton_interpreted:
        fallback = INTERPRETED
    else:
        fallback = config_for(groups, n, dtype, where.backend)
    if config is None and where.triton_interpreted:
        config = fallback
    elif config is None:
        tma = tma_here(problem, where)
        config = config_for(groups, n, dtype, where.backend, tma, gluon_here(problem, where))
    made: Tables = {}  # a table per block_m for all the forms below: the device only reads it
    pointer_config = fallback if config.tma else config
    pointer = _pointer_launcher(problem, where, input_precision, pointer_config, made)
    if not config.tma:
        return gemmreg.variant(pointer, config.name)
    if config.gluon:  # a B that is not one stack of weights goes to the TMA form
        tma_config = config_for(groups, n, dtype, where.backend, tma=True)
        table, entries, grid = _table_and_grid(problem, where, tma_config, made)
        tma_launch = grouped_tma.tma_launcher(
            tma_config, table, entries, problem.m, n, problem.k, grid, input_precision, pointer
        )
        table, entries, grid = _table_and_grid(problem, where, config, made)
        launch = grouped_tma.gluon_launcher(config, table, entries, n, problem.k, grid, tma_launch)
        return gemmreg.variant(launch, f"{config.name} (else {tma_config.name}, {fallback.name})")
    table, entries, grid = _table_and_grid(problem, where, config, made)
    launch = grouped_tma.tma_launcher(
        config, table, entries, problem.m, n, problem.k, grid, input_precision, fallback=pointer
    )
    return gemmreg.variant(launch, f"{config.name} (else {fallback.name})")


def _table_and_grid(
    problem: gemmreg.Problem,
    where: gemmreg.Environment,
    config: GroupedConfig,
    made: Tables,
) -> tuple[torch.Tensor, int, tuple[int]]:
    """The tile table on the device, its entries, and the persistent grid;
    ``made``: the tables already on the device by ``block_m`` (a table
    depends on nothing else), where one is taken rather than built and
    copied again, and where a new one is kept."""
    import torch

    if config.block_m not in made:
        flat = tile_table(problem.groups, config.block_m)
        table = torch.tensor(flat, dtype=torch.int32, device=where.device)
        made[config.block_m] = table, len(flat) // TABLE_FIELDS
    table, entries = made[config.block_m]
    tiles = entries * -(-problem.n // config.block_n)
    most = INTERPRETER_PROGRAMS if where.triton_interpreted else where.multiprocessors or tiles
    return table, entries, (max(1, persistent_programs(tiles, most)),)


def _pointer_launcher(
    problem: gemmreg.Problem,
    where: gemmreg.Environment,
    input_precision: str,
    config: GroupedConfig,
    made: Tables,
) -> gemmreg.Launch:
    table, entries, grid = _table_and_grid(problem, where, config, made)
    kernel = grouped_kernel()
    n, k = problem.n, problem.k

    def launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, offsets: object) -> Any:
        return kernel[grid](
            a,
            b,
            out,
            table,
            entries,
            n,
            k,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            b.stride(2),
            out.stride(0),
            out.stride(1),
            BLOCK_M=config.block_m,
            BLOCK_N=config.block_n,
            BLOCK_K=config.block_k,
            GROUP_M=config.group_m,
            INPUT_PRECISION=input_precision,
            num_warps=config.num_warps,
            num_stages=config.num_stages,
        )

    return launch
