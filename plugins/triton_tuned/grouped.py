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

The config is a rule (:func:`config_for`), not a tuning (the grouped path
has no tuner yet); where the H200 has measured the dense paths' tiles, the
rule takes the grouped twin of the winner. The persistent grid is one
program per SM at most (:func:`.launchers.persistent_programs`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
import gemmreg
from gemmreg_plugins.triton_tuned import grouped_tma, paths_here, tuning_cache
from gemmreg_plugins.triton_tuned.grouped_kernel import TABLE_FIELDS, grouped_kernel
from gemmreg_plugins.triton_tuned.launch_config import GROUP_M
from gemmreg_plugins.triton_tuned.launchers import persistent_programs

if TYPE_CHECKING:
    import torch

    Tables = dict[int, tuple[torch.Tensor, int]]  # tile tables on the device, entries: by block_m

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
    tma: bool = False
    """The TMA form (:mod:`.grouped_tma_kernel`) rather than the pointer kernel."""
    epilogue_parts: int = 1
    """The TMA form's C stored in this many column slices (its staging buffer
    shrinks with them, leaving shared memory for one more stage)."""
    flatten: bool = False
    """The TMA form's tile and K loops pipelined as one (across tiles)."""
    shared: bool = False
    """The TMA form's A and C through one descriptor each, made once per
    program, C's own only for a member's last partial tile: one descriptor
    made per tile instead of three, none where B is one stack of N x K
    weights, which one descriptor then reads too (:mod:`.grouped_tma_kernel`).
    Not with ``flatten``: Triton (3.6 on the H200, 3.7 here) fails to flatten
    a loop whose body makes a descriptor in a branch, C's for a partial tile."""
    gluon: bool = False
    """The TMA form warp-specialised in Gluon (:mod:`.gluon_grouped`): 128-row
    tiles, one loader warp and two consumer warpgroups (``num_warps`` 4, the
    first's), B one stack of weights; other operands go to the TMA form."""

    def __attrs_post_init__(self) -> None:
        if self.shared and self.flatten:
            raise ValueError(f"shared descriptors do not compile in a flattened loop: {self}")
        gluon_form = (self.tma, self.block_m, self.num_warps, self.epilogue_parts) == (
            True,
            128,
            4,
            1,
        )
        if self.gluon and not (gluon_form and not self.flatten and not self.shared):
            raise ValueError(f"the Gluon form takes 128-row TMA tiles, 4 warps, C whole: {self}")

    @property
    def name(self) -> str:
        """``128x256x64-w8-s4-tma-split2``: what the probe and the log print."""
        form = ("-tma" if self.tma else "") + ("-flat" if self.flatten else "")
        form += ("-shared" if self.shared else "") + ("-gluon" if self.gluon else "")
        split = f"-split{self.epilogue_parts}" if self.epilogue_parts > 1 else ""
        sizes = f"{self.block_m}x{self.block_n}x{self.block_k}"
        return f"{sizes}-w{self.num_warps}-s{self.num_stages}{form}{split}"


INTERPRETED = GroupedConfig(block_m=16, block_n=32, block_k=16, num_warps=4, num_stages=1)
"""The interpreter's one config: small tiles run fastest there (NumPy)."""


def typical_rows(groups: Sequence[int]) -> int:
    """The median rows of the non-empty members (what most tiles hold)."""
    present = [size for size in groups if size]
    return int(statistics.median(present)) if present else 0


def config_for(
    groups: Sequence[int],
    n: int,
    dtype: str,
    backend: str = "cuda",
    tma: bool = False,
    gluon: bool = False,
) -> GroupedConfig:
    """The GPU config for members of ``groups`` rows, ``n`` columns, ``dtype``;
    ``tma``: the TMA form can run here and take these operands; ``gluon``:
    its Gluon form is offered too (:func:`gluon_here`), and then takes
    :mod:`.gluon_ws`'s tiles where members fill 128-row tiles: 128 x 256 x 64
    in 3 stages, or 128 x 128 x 64 in 4 under 256 columns.

    ``BLOCK_M`` follows the members' typical rows (16, 32, 64 or 128), so
    decode's few rows per expert do not fill 128-row tiles with masked rows.
    Then, from the H200's measurements (bf16, B a transposed view: the
    grouped probe over ``examples/shapes/moe-experts.yaml``,
    ``scripts/probes/fp8_grouped_configs.py --only grouped``, where the
    from-64-rows TMA rule below was the fastest of 55 configs at both
    prefill points (``evidence/2026-12-04-h200-fp8-gluon-and-moe-grouped``),
    though in ``gemmreg bench`` SLOWER and level against ``torch_ref``'s
    loop (``evidence/2026-12-04-h200-fp8-llm-and-grouped-roof/grouped``);
    the dense paths' ``evidence/2026-12-04-h200-llm-projections/probe``):

    - up to 32 rows (decode), 256-wide tiles of 4 stages: with TMA the
      64 x 256 x 64 form on one warpgroup (1.08x and 1.16x the ``torch.mm``
      loop at Mixtral's two decode points, where the 16 x 64 tiles ran at
      0.78x and 0.85x), else the pointer kernel's rows in 256 columns
      (1.08x and 1.12x at 16 rows);
    - from 64 rows with TMA, the persistent TMA tiles that came within 1-7%
      of ``torch.mm`` from 128 to 8192 rows: 128 x 256 x 64, 8 warps, 4
      stages and C stored in halves once N fills 256-wide tiles, with
      descriptors made once per program (``shared``: 4% ahead of a
      descriptor per tile at Mixtral's prefill, n 14336, and level at k
      14336, ``evidence/2026-12-05-h200-fp8-tma-and-grouped-probes``), else
      128 x 128 x 64 in 5 stages (64 x 128 x 64, one warpgroup, at 64 rows);
    - from 64 rows without TMA, the pointer kernel's 128 x 128 x 64 in 4
      warps, 4 stages: 1.21x ``torch.mm``'s time at 128 rows where the
      pointer 128 x 256 x 64 took 1.66-1.78x.

    fp32 (TF32) takes 128-wide pointer tiles half as deep; ROCm the tiled
    path's tiles (two stages, at most 128 x 128 x 32: an MI300's 64 KB of
    LDS), their rows chosen by the same rule from 32 up."""
    rows = typical_rows(groups)
    block_m = next((edge for edge in (16, 32, 64) if rows <= edge), 128)
    if backend == "rocm":
        return GroupedConfig(block_m=max(block_m, 32), block_n=128, block_k=32, num_warps=4, num_stages=2)  # fmt: skip
    if dtype == "fp32":
        return GroupedConfig(block_m=block_m, block_n=128, block_k=32, num_warps=8 if block_m == 128 else 4, num_stages=3)  # fmt: skip
    if block_m <= 32 and n >= 256 and tma:
        return GroupedConfig(block_m=64, block_n=256, block_k=64, num_warps=4, num_stages=4, tma=True)  # fmt: skip
    if block_m <= 32:
        block_n = 256 if n >= 256 else 64
        return GroupedConfig(block_m=block_m, block_n=block_n, block_k=64, num_warps=4, num_stages=4)  # fmt: skip
    if gluon and tma and block_m == 128:
        wide = n >= 256
        return GroupedConfig(block_m=128, block_n=256 if wide else 128, block_k=64, num_warps=4, num_stages=3 if wide else 4, tma=True, gluon=True)  # fmt: skip
    if tma and block_m == 128 and n >= 256:
        return GroupedConfig(block_m=128, block_n=256, block_k=64, num_warps=8, num_stages=4, tma=True, epilogue_parts=2, shared=True)  # fmt: skip
    if tma and block_m == 128:
        return GroupedConfig(block_m=128, block_n=128, block_k=64, num_warps=8, num_stages=5, tma=True, epilogue_parts=2)  # fmt: skip
    if tma:
        return GroupedConfig(block_m=64, block_n=128, block_k=64, num_warps=4, num_stages=4, tma=True)  # fmt: skip
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
    made: Tables | None = None,
) -> tuple[torch.Tensor, int, tuple[int]]:
    """The tile table on the device, its entries, and the persistent grid;
    ``made``: tables already on the device by ``block_m`` (the table depends
    on nothing else), where one is taken rather than built and copied again."""
    import torch

    made = {} if made is None else made
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
    made: Tables | None = None,
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
