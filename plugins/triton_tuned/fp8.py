"""triton_tuned's fp8 path: e4m3 A and B, scaled per tensor or per row of A
and column of B, C in bf16, fp16 or fp32, through the kernels below.

What is declared: math ``fp8`` (exact products, partial sums promoted into
fp32 every ``BLOCK_K`` elements of K, as cuBLASLt does without fast
accumulation), so the standard fp8 tolerance holds; e4m3 only (e5m2 would be
the same kernel, but is neither timed nor checked on a GPU yet); NVIDIA from
Hopper (sm90) only: the one target where Triton promotes (``max_num_imprecise_acc``
is honoured by its ``wgmma`` lowering, 64 rows and up) or widens e4m3 to fp16
(``mma.sync`` below 64 rows). On Ada (sm89) and sm12x Triton's fp8 dot is
``mma.sync`` on e4m3 chained through the tensor core's short running sum with
no promotion (``acc += tl.dot(a, b)`` is folded back into that chain), and
sm10x's ``tcgen05`` path is unchecked; not ROCm, whose MI300 takes the
other e4m3 (``fnuz``: no negative zero, another bias), not this one. Under
Triton's interpreter the core refuses fp8 (NumPy has no such type); the
tests run this same kernel there on fp16 operands that hold e4m3 values
(every e4m3 value is exact in fp16), which proves its indexing and scales.

Two kernels, chosen by a rule from the H200's measurements
(``scripts/probes/fp8_grouped_configs.py``: every candidate beside
``torch._scaled_mm``, ``evidence/2026-12-04-h200-fp8-gluon-and-moe-grouped``):

- up to 128 rows, the Triton kernel of :mod:`.fp8_kernel` in 64 x 64 x 128
  tiles on one warpgroup (``wgmma`` from 64 rows, so decode's single row
  too), 1.01-1.31x ``torch._scaled_mm`` at 1 and 16 tokens; for 128 rows of
  a wide N (14336) 128 x 128 tiles, fewer of them: the Gluon kernel's where it
  runs (0.99x in the probe, SLOWER 0.97x in ``gemmreg bench``,
  ``evidence/2026-12-04-h200-llm-fp16-fp8-tf32``), else the Triton kernel's
  on 8 warps (0.81x in the probe, SLOWER 0.82x in ``gemmreg bench``,
  ``evidence/2026-12-04-h200-fp8-llm-and-grouped-roof``);
- past 128 rows, the warp-specialised Gluon kernel of :mod:`.fp8_gluon`
  (128 x 128 x 128 tiles, 5 stages) where it runs (Hopper, A row-major, B a
  transposed weight, TMA-able), which is level with or ahead of cuBLASLt;
  the Triton kernel's 128 x 128 tiles elsewhere, at 0.53-0.72x: its
  promotion waits for every ``wgmma`` in flight each K step.

A third, through TMA with one tile per program (:mod:`.fp8_tma_kernel`),
takes a deep K into a narrow N up to 128 rows (:func:`config_for`).

No 128 x 256 tile: promotion keeps two fp32 accumulators a thread, 128
registers each at that size, and ptxas spills them in the Triton kernel;
the CPU tests hold every chosen config to no stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import gemmreg
from gemmreg_plugins.triton_tuned import paths_here, tma_rules
from gemmreg_plugins.triton_tuned.fp8_kernel import fp8_kernel
from gemmreg_plugins.triton_tuned.launch_config import GROUP_M, MAX_PIECES, piece_widths

if TYPE_CHECKING:
    import torch

DTYPES: tuple[gemmreg.DType, ...] = ("fp8e4m3",)
FP8_LEAST_CAPABILITY = (8, 9)
"""fp8 tensor cores came with NVIDIA Ada (sm89) and Hopper (sm90)."""
PROMOTING_MAJOR = 9
"""Hopper: where the kernel's partial sums are promoted (the module's docstring)."""
PRECISION_DETAIL = (
    "tl.dot on fp8 (wgmma on sm90), partial sums promoted into fp32 every BLOCK_K "
    "(max_num_imprecise_acc), scales applied to the fp32 tile"
)
ROCM_REFUSAL = (
    "triton_tuned's fp8 path is built for NVIDIA's e4m3 (float8_e4m3fn); an MI300 "
    "multiplies the other e4m3 (fnuz), and no AMD GPU has checked it"
)


@attrs.frozen(kw_only=True)
class Fp8Config:
    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int
    group_m: int = GROUP_M
    gluon: bool = False
    """The warp-specialised Gluon kernel (:mod:`.fp8_gluon`, 128 x 128 tiles,
    ``num_stages`` its ring) where the operands allow it, else the Triton kernel."""
    tma: bool = False
    """The TMA kernel, one tile per program (:mod:`.fp8_tma_kernel`), where the
    operands allow it (:func:`tma_takes`), else the Triton kernel; with
    ``split_k`` ranges of K or, K whole, the tile in ``pieces``."""
    split_k: int = 1
    pieces: int = 1
    """As ``Config.pieces``: ``block_n`` columns, and its half and quarter beside them."""

    def __attrs_post_init__(self) -> None:
        cut = self.split_k > 1 or self.pieces > 1
        both = self.split_k > 1 and self.pieces > 1
        if (cut and not self.tma) or both or self.pieces > MAX_PIECES:
            raise ValueError(
                f"splits or pieces (up to {MAX_PIECES}), one or the other, TMA only: {self}"
            )
        if self.tma and self.gluon:
            raise ValueError(f"one kernel: the TMA one or the Gluon one: {self}")

    @property
    def columns(self) -> int:
        """Columns of C per tile: ``block_n``, or the sum of its ``pieces``."""
        return sum(piece_widths(self.block_n, self.pieces))

    @property
    def name(self) -> str:
        """``triton:64x64x128-s3-w4-g8``: which kernel, in which tiles (the TMA
        kernel's with ``-k<splits>`` and ``-p<pieces>``)."""
        kernel = "gluon" if self.gluon else "tma" if self.tma else "triton"
        size = f"{self.block_m}x{self.block_n}x{self.block_k}"
        cut = f"-k{self.split_k}" + (f"-p{self.pieces}" if self.pieces > 1 else "")
        return f"{kernel}:{size}-s{self.num_stages}-w{self.num_warps}-g{self.group_m}" + (
            cut if self.tma else ""
        )


INTERPRETED = Fp8Config(block_m=16, block_n=32, block_k=32, num_warps=4, num_stages=1)
"""The config the tests run under the interpreter (small tiles: NumPy)."""


SMALL_M = 128
"""Up to this many rows the Triton kernel's 64-row tiles (or 128 x 128 for
wide N) win; past it the Gluon kernel's warp-specialised 128 x 128 tiles."""


DEEP_K, NARROW_N = 8192, 4096
"""The TMA kernel's K (at least) and N (at most) in :func:`config_for`."""


def _tiles(m: int, n: int, block_m: int, block_n: int) -> int:
    return -(-m // block_m) * -(-n // block_n)


def config_for(m: int, n: int, gluon: bool = False, k: int = 0) -> Fp8Config:
    """The GPU config for an M x N output over ``k`` (the module's rule);
    ``gluon``: the Gluon and TMA kernels can run here (:func:`gluon_here`).

    Up to 128 rows over a deep K into a narrow N (Llama 3 8B's down
    projection), the TMA kernel (:mod:`.fp8_tma_kernel`): 64 x 64 tiles K
    whole 1.088x and 1.235x ``torch._scaled_mm`` at 1 and 16 tokens, 128 x 64
    in 2 ranges of K 1.415x at 128, against the Triton tiles' 0.974-1.003x; 0.52x
    at K 4096 (the H200 probe, ``evidence/2026-12-05-h200-fp8-tma-and-grouped-probes``)."""
    if gluon and k >= DEEP_K and n <= NARROW_N and m <= SMALL_M:
        if m > 64:
            return Fp8Config(block_m=128, block_n=64, block_k=128, num_warps=8, num_stages=6, tma=True, split_k=2)  # fmt: skip
        return Fp8Config(block_m=64, block_n=64, block_k=128, num_warps=4, num_stages=6, tma=True)  # fmt: skip
    if m > SMALL_M:
        if gluon:
            return Fp8Config(block_m=128, block_n=128, block_k=128, num_warps=4, num_stages=5, gluon=True)  # fmt: skip
        return Fp8Config(block_m=128, block_n=128, block_k=128, num_warps=8, num_stages=4)
    if m > 64 and n >= 8192:
        if gluon:  # the config probe: 0.99x torch._scaled_mm at 128x14336x4096, 0.81x below
            return Fp8Config(block_m=128, block_n=128, block_k=128, num_warps=4, num_stages=5, gluon=True)  # fmt: skip
        return Fp8Config(block_m=128, block_n=128, block_k=128, num_warps=8, num_stages=4)
    return Fp8Config(block_m=64, block_n=64, block_k=128, num_warps=4, num_stages=4)


def gluon_here(where: gemmreg.Environment) -> bool:
    """Whether :mod:`.fp8_gluon` can run here: Hopper, with a Triton whose Gluon
    it is written in (as the ``gluon_ws`` path)."""
    return paths_here.gluon_supported(where)


def refusal(problem: gemmreg.Problem, where: gemmreg.Environment) -> str | None:
    """Why this process cannot run ``problem``'s fp8 here, or None."""
    if problem.dtype not in DTYPES:
        return None
    if where.backend == "rocm":
        return ROCM_REFUSAL
    if where.backend != "cuda":
        return None
    major, minor = where.capability or (0, 0)
    if (major, minor) < FP8_LEAST_CAPABILITY:
        return "fp8 tensor cores need NVIDIA Ada (sm89) or later"
    if major != PROMOTING_MAJOR:
        return (
            "triton_tuned's fp8 promotes its partial sums into fp32 on Hopper (sm90) only; "
            f"on sm{major}{minor} Triton ignores max_num_imprecise_acc, so the declared "
            "math (fp8, cuBLASLt's precision) would not be assured"
        )
    return None


def tma_takes(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> bool:
    """The operands the TMA kernels (:mod:`.fp8_gluon`, :mod:`.fp8_tma_kernel`)
    take: A row-major and B a transposed view of a row-major weight (fp8
    ``wgmma`` reads both K-major from shared memory), all three as TMA takes
    them; e4m3 (the kernels' operand type)."""
    return (
        str(a.dtype) == str(b.dtype) == "torch.float8_e4m3fn"
        and not tma_rules.is_transposed(a)
        and tma_rules.is_transposed(b)
        and tma_rules.tma_refusal(a, b, out) is None
    )


def run(
    config: Fp8Config,
    rowwise: bool,
    a: torch.Tensor,
    b: torch.Tensor,
    out: torch.Tensor,
    scale_a: torch.Tensor,
    scale_b: torch.Tensor,
    num_sms: int = 1,
) -> Any:
    """One launch: C = (scale_a * A) @ (B * scale_b), written into ``out``;
    ``num_sms`` bounds the Gluon kernel's persistent programs."""
    m, k = a.shape
    n = b.shape[1]
    if (config.gluon or config.tma) and tma_takes(a, b, out):
        # Each kernel's host side is imported past the fallback: only a Triton with
        # this Gluon has fp8_gluon (``paths_here``), and neither is needed before.
        if config.gluon:
            from gemmreg_plugins.triton_tuned import fp8_gluon

            return fp8_gluon.run_gluon_kernel(config, rowwise, a, b, out, scale_a, scale_b, num_sms)  # fmt: skip
        from gemmreg_plugins.triton_tuned import fp8_tma

        return fp8_tma.run_tma_kernel(config, rowwise, a, b, out, scale_a, scale_b)
    if config.gluon or config.tma:  # the Triton kernel at its own measured config: not the
        # Gluon ring's 4 warps (its two fp32 sums of a 128 x 128 tile then take all 255
        # registers), nor a TMA tile's splits or pieces
        config = config_for(m, n)
    grid = (_tiles(m, n, config.block_m, config.block_n),)
    return fp8_kernel()[grid](
        a,
        b,
        out,
        scale_a,
        scale_b,
        m,
        n,
        k,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        out.stride(0),
        out.stride(1),
        scale_a.stride(0),
        scale_b.stride(1),
        BLOCK_M=config.block_m,
        BLOCK_N=config.block_n,
        BLOCK_K=config.block_k,
        GROUP_M=config.group_m,
        ROWWISE=rowwise,
        PROMOTE_EVERY=config.block_k,
        num_warps=config.num_warps,
        num_stages=config.num_stages,
    )


def fp8_launcher(problem: gemmreg.Problem, where: gemmreg.Environment) -> gemmreg.Launch:
    """``launch(a, b, out, scale_a, scale_b)`` for ``problem``."""
    num_sms = where.multiprocessors or 1
    config = config_for(problem.m, problem.n, gluon_here(where), problem.k)
    rowwise = problem.scaling == "rowwise"

    def launch(
        a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, sa: torch.Tensor, sb: torch.Tensor
    ) -> Any:
        return run(config, rowwise, a, b, out, sa, sb, num_sms)

    # the TMA kernels take TMA-able operands only; run() gives the rest to the Triton one
    fallback = ""
    if config.gluon or config.tma:
        fallback = f" (else {config_for(problem.m, problem.n).name})"
    return gemmreg.variant(launch, config.name + fallback)
