"""The configs of triton_tuned's grouped path (:mod:`.grouped`): what one
holds (tiles, warps, stages, the form: pointer, TMA or Gluon, and the forms'
own choices), the interpreter's one config, and the rule that picks one from
the members' typical rows, n, the dtype and what runs here
(:func:`config_for`). The grouped path has no tuner yet; the rule is set
from the H200's measurements, which its docstring cites."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import attrs
from gemmreg_plugins.triton_tuned.launch_config import GROUP_M


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
    its Gluon form is offered too (:func:`.grouped.gluon_here`), and then takes
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
