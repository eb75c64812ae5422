"""triton_tuned's grouped path: an MoE layer's experts (a grouped problem:
members of ``problem.groups[i]`` rows sharing n and k) in one launch of
:mod:`.grouped_kernel`, where a loop of ``torch.mm`` launches one GEMM per
expert and leaves SMs idle on every small one.

Everything shape-dependent is settled in ``prepare`` (the cold start): the
tile table, built from ``problem.groups`` on the host and moved to the
device once, and the config. The launch reads neither the offsets tensor
(reading it on the host would synchronise inside a timed call; the core
makes it from the same sizes) nor anything it saw before: every call
computes every tile.

The config is a rule, not a tuning (the grouped path has no tuner yet):
``BLOCK_M`` follows the members' typical rows, so decode's few rows per
expert do not fill 128-row tiles with masked rows; 16-bit inputs take
128 x 256 tiles when members are large (the tiles of the other paths on
the H200), 128-wide ones otherwise; fp32 (TF32) half the depth. The
persistent grid is one program per SM at most.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
from gemmreg_plugins.triton_tuned.grouped_kernel import TABLE_FIELDS, grouped_kernel
from gemmreg_plugins.triton_tuned.launch_config import GROUP_M

if TYPE_CHECKING:
    import gemmreg
    import torch

INTERPRETER_PROGRAMS = 3
"""Programs under the interpreter: fewer than the tiles of every grouped
case, so the persistent loop takes several tiles per program there too."""


@attrs.frozen(kw_only=True)
class GroupedConfig:
    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int
    group_m: int = GROUP_M


INTERPRETED = GroupedConfig(block_m=16, block_n=32, block_k=16, num_warps=4, num_stages=1)
"""The interpreter's one config: small tiles run fastest there (NumPy)."""


def typical_rows(groups: Sequence[int]) -> int:
    """The median rows of the non-empty members (what most tiles hold)."""
    present = [size for size in groups if size]
    return int(statistics.median(present)) if present else 0


def config_for(groups: Sequence[int], n: int, dtype: str, backend: str = "cuda") -> GroupedConfig:
    """The GPU config for members of ``groups`` rows, ``n`` columns, ``dtype``
    (the rule of the module's docstring). On ROCm, the tiled path's tiles
    (two stages, at most 128 x 128 x 32: an MI300's 64 KB of LDS), their
    rows chosen by the same rule from 32 up."""
    rows = typical_rows(groups)
    block_m = next((edge for edge in (16, 32, 64) if rows <= edge), 128)
    if backend == "rocm":
        return GroupedConfig(block_m=max(block_m, 32), block_n=128, block_k=32, num_warps=4, num_stages=2)  # fmt: skip
    if dtype == "fp32":
        return GroupedConfig(block_m=block_m, block_n=128, block_k=32, num_warps=8 if block_m == 128 else 4, num_stages=3)  # fmt: skip
    if block_m == 128 and n >= 256:
        return GroupedConfig(block_m=128, block_n=256, block_k=64, num_warps=8, num_stages=3)
    return GroupedConfig(block_m=block_m, block_n=128, block_k=64, num_warps=4, num_stages=4)


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


def grouped_launcher(
    problem: gemmreg.Problem,
    where: gemmreg.Environment,
    input_precision: str,
    config: GroupedConfig | None = None,
) -> gemmreg.Launch:
    """``launch(a, b, out, offsets)`` for ``problem``, its table on the device;
    ``config``: instead of the rule's (a probe weighing others)."""
    import torch

    groups = problem.groups
    if config is None and where.triton_interpreted:
        config = INTERPRETED
    elif config is None:
        config = config_for(groups, problem.n, problem.dtype, where.backend)
    flat = tile_table(groups, config.block_m)
    table = torch.tensor(flat, dtype=torch.int32, device=where.device)
    entries = len(flat) // TABLE_FIELDS
    tiles = entries * -(-problem.n // config.block_n)
    most = INTERPRETER_PROGRAMS if where.triton_interpreted else where.multiprocessors or tiles
    grid = (max(1, min(tiles, most)),)
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
